// Package channel is the agent channel: the persistent WebSocket connection
// of each device (API Gateway WebSocket API; infra/local's Bridge under make
// run), over which commands and elevation decisions reach the agent within a
// second. The wire is docs/decisions.md#agent-channel and
// shared/api/openapi/agent-channel.md.
//
// # Who a connection is
//
// A Lambda REQUEST authorizer on $connect (Handler.Authorize, identity
// sources: the Authorization header and the deviceId query string) checks
// the agent token (the agent row's GetItem, as the HTTP agent routes do) and
// allows the connection with context {deviceId, orgId}; a refused token is
// 401 in the handshake (docs/decisions.md#connecting-to-the-channel). API Gateway hands that context to every
// later event of the connection (requestContext.authorizer of $connect,
// $default and $disconnect), so the channel keeps no row of its own: the
// agent row's channel marker (ch = <until>#<connection id>, shared/device)
// is the record of the device's one live connection. The authorizer runs in
// the agent-channel function itself (Invoke tells the events apart): it
// needs the same token check, and a reconnect's two invocations then share
// one warm function instead of paying two cold starts.
//
// # Presence
//
// $connect writes the marker in one UpdateItem that answers the marker it
// replaced (agent.Service.Connect); the replaced connection is closed
// through the Management API. Only when the device's status moves (offline
// or pending -> online) does a transaction follow (device row, agent row,
// live row, device.online's outbox row). A device already online keeps its
// rows unless its last-seen key (GSI5) leaves less than a connection's life
// (device.ConnectedFor, 2 hours 5 minutes): the connect then moves it
// device.ConnectedAhead (24 hours) ahead, so the offline sweep leaves the
// device alone while its connections live. $disconnect makes the device
// offline (device.offline) only while the marker names its connection, so a
// replaced connection's close changes nothing. An agent that reconnects
// before API Gateway's 2-hour limit should open the new connection before
// closing the old one (the wire's advice): the device then stays online
// without events. API Gateway's $disconnect is best effort: a device whose
// $disconnect is lost stays online until the offline sweep finds its key
// due, at most ConnectedAhead + device.OfflineAfter after the last connect
// (or sooner: its first heartbeat over HTTP after the marker's end moves
// the key back to now).
//
// # Invariants
//
//   - One live connection per device: the marker names it; the newest
//     connect wins and closes the one it replaced.
//   - A frame ($default) is served only while the device's marker names its
//     connection; otherwise the connection is closed (the unauthorized
//     error frame is its answer), so a replaced connection that its
//     replacer could not name (a lost answer, Handler.drop) does not
//     outlive its next frame.
//   - Commands live on the agent row (device.Agent.Commands), written once
//     with their id by the request that creates them, which then pushes them
//     (Pusher, best effort: a failed push leaves the command for the next
//     re-send). The agent acknowledges with {"type":"ack","id"}
//     (device.AckWrite, idempotent); every unacknowledged, unexpired command
//     is re-sent with the same id on every ping (the first one follows the
//     connect: API Gateway accepts no post before $connect has answered)
//     and on every heartbeat, over the channel or HTTP: at least once,
//     exactly once in effect.
//   - A post answered GoneException forgets the stale marker (the agent row
//     only while it still names that connection).
//
// # What each event reads and writes
//
// Each event's call count is asserted by TestEventBudgetsAndQuietKeepalive
// (budget_test.go), not restated here (the HTTP routes' budgets:
// docs/budgets.md, from tests/fixture/budgets.go):
//
//	event                 what
//	authorizer            agent row GetItem (the token check)
//	$connect              agent row UpdateItem (the marker, answering the replaced one); when the last-seen key is due: the live row and the agent row's copy; when the device comes online: the presence transaction (device row, agent row, live row, device.online's outbox row), then the outbox clear; an agent row read when either races another change
//	$disconnect           agent row GetItem; when it names this connection: the transaction with device.offline's outbox row, the outbox clear
//	$default ping         agent row GetItem (then the re-send of what is pending; on a connection not the live one, its close)
//	$default ack          agent row GetItem, agent row UpdateItem (conditional)
//	$default heartbeat    agent row GetItem, then the HTTP heartbeat's reads and writes after its token check (PAM settings, device update)
//	a push                agent row GetItem (then PostToConnection)
//
// A steady connected device writes only the marker at each reconnect (1 WCU
// every 2 hours) and the last-seen key's move once a day (5 WCU for a fully
// described device): about 0.75 WCU an hour (tests/cost).
package channel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/store"
)

// Rows reads and writes the agent rows; device.Store satisfies it.
type Rows interface {
	Agent(ctx context.Context, id string) (*device.Agent, error)
	Do(ctx context.Context, w *store.Write) error
}

// ack marks command commandID of device deviceID delivered; an unknown or
// already removed id is no error.
func ack(ctx context.Context, rows Rows, deviceID, commandID string, now time.Time) error {
	err := rows.Do(ctx, device.AckWrite(deviceID, commandID, now))
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("ack command %s: %w", commandID, err)
	}
	return nil
}
