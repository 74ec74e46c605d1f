// Package channel is the agent channel: the persistent WebSocket connection
// of each device (API Gateway WebSocket API; infra/local's Bridge under make
// run), over which commands and elevation decisions reach the agent within a
// second. The wire is docs/decisions.md#agent-channel and
// shared/api/openapi/agent-channel.md.
//
// # Rows
//
//	entity              PK / SK                      ttl       what
//	device connection   AGENT#<device id> / CONN     2 h       the device's live connection id (one per device)
//	connection          WSCONN#<connection id> / WSCONN  2 h   the device and organization of a connection ($default and $disconnect know only the connection id)
//
// Both rows are keyed by ids the caller only learns through the device's
// agent row (AGENT#<id>, shared/device) or API Gateway's connection id, like
// the agent row itself; they carry the organization for the logs. Their ttl
// is the connection's longest life in API Gateway (2 hours), which nothing
// extends, so a keepalive (ping or heartbeat frame) writes nothing.
//
// # Presence
//
// $connect makes the device online (device.online when it was not) and
// puts the channel marker (the connection's end and id) on the agent row;
// the connection row keeps the marker, and its $disconnect hands it back,
// so only the newest connection's close makes the device offline
// (device.offline). A $connect whose connection row cannot be written takes
// its marker back. An agent that reconnects before API Gateway's 2-hour
// limit should open the new connection before closing the old one (the
// wire's advice): the device then stays online without events.
//
// # Invariants
//
//   - One live connection per device: $connect records the new connection on
//     the device row in one UpdateItem that also answers the one it replaced,
//     which is then closed (Management API DeleteConnection).
//   - $disconnect deletes the device row only while it still names this
//     connection (condition), so a late disconnect of a replaced connection
//     never forgets the new one.
//   - Commands live on the agent row (device.Agent.Commands), written once
//     with their id by the request that creates them, which then pushes them
//     (Pusher, best effort: a failed push leaves the command for the next
//     re-send). The agent acknowledges with {"type":"ack","id"}
//     (device.AckWrite, idempotent); every unacknowledged, unexpired command
//     is re-sent with the same id on the connection's first frame (API
//     Gateway accepts no post before $connect has answered) and on every
//     heartbeat, over the channel or HTTP.
//   - A post answered GoneException forgets the stale connection (the
//     device row only while it names it).
//
// # Budgets
//
//	event                 calls   what
//	$connect              4       agent row GetItem (the token check), presence transaction (agent.Service.MarkOnline: device row, agent row's marker; +1 outbox clear when the device comes online), connection PutItem, device row UpdateItem (answers the replaced connection); +1 when it replaces one (the replaced connection's row; the device row names the new one already)
//	$disconnect           6       connection GetItem, connection DeleteItem, device row conditional delete, agent row GetItem, presence transaction (MarkOffline, device.offline's outbox row) and the outbox clear; 3 for a connection already replaced, 4 when the agent row names a newer one
//	$default ping         1       connection GetItem (+2 on the first frame: agent row GetItem and the re-send claim)
//	$default ack          2       connection GetItem, agent row UpdateItem (conditional)
//	$default heartbeat    1 + the HTTP heartbeat's (agent row GetItem, PAM settings, device update)
//	a push                1       device row GetItem (then PostToConnection)
package channel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/store"
)

// Lifetimes of the connection rows.
const (
	// TTL is API Gateway's longest connection (2 hours), which no
	// keepalive extends, so a keepalive never writes.
	TTL = 2 * time.Hour
)

// DeviceConn is a device's live connection (AGENT#<id> / CONN).
type DeviceConn struct {
	store.Keys
	ConnID      string `dynamodbav:"connId"`
	DeviceID    string `dynamodbav:"deviceId"`
	OrgID       string `dynamodbav:"orgId"`
	ConnectedAt string `dynamodbav:"connectedAt"`
	// Prev is the connection this one replaced ("" for none), answered by
	// the connect write itself.
	Prev string `dynamodbav:"prev"`
}

// Conn is one connection (WSCONN#<id> / WSCONN).
type Conn struct {
	store.Keys
	ConnID   string `dynamodbav:"connId"`
	DeviceID string `dynamodbav:"deviceId"`
	OrgID    string `dynamodbav:"orgId"`
	// Marker is the device's channel marker that $connect set
	// (agent.Service.MarkOnline), which its $disconnect hands back to
	// MarkOffline.
	Marker string `dynamodbav:"marker,omitempty"`
	// Fresh marks a connection whose pending commands are not re-sent yet
	// (the first frame does it: nothing can be posted during $connect).
	Fresh bool `dynamodbav:"fresh,omitempty"`
}

func deviceKey(deviceID string) store.KeyRef {
	return store.KeyRef{PK: "AGENT#" + deviceID, SK: "CONN"}
}
func connKey(connID string) store.KeyRef { return store.KeyRef{PK: "WSCONN#" + connID, SK: "WSCONN"} }

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// Connect records connection connID of device deviceID (organization orgID)
// with its presence marker and answers the connection it replaced ("" for none).
func (s Store) Connect(ctx context.Context, deviceID, orgID, connID, marker string, now time.Time) (string, error) {
	ttl := store.TTL(now.Add(TTL))
	k := connKey(connID)
	c := Conn{Keys: store.Keys{PK: k.PK, SK: k.SK, TTL: ttl}, ConnID: connID, DeviceID: deviceID, OrgID: orgID, Marker: marker, Fresh: true}
	if err := s.St.Do(ctx, store.Put(c)); err != nil {
		return "", fmt.Errorf("connect %s: %w", connID, err)
	}
	// Every operand of a SET reads the item as it was, so prev is the
	// connection being replaced; the write has no condition: the newest
	// connect wins, and learns whom it replaced.
	dk := deviceKey(deviceID)
	upd := expression.Set(expression.Name("prev"), expression.IfNotExists(expression.Name("connId"), expression.Value(""))).
		Set(expression.Name("connId"), expression.Value(connID)).
		Set(expression.Name("deviceId"), expression.Value(deviceID)).
		Set(expression.Name("orgId"), expression.Value(orgID)).
		Set(expression.Name("connectedAt"), expression.Value(clock.Format(now))).
		Set(expression.Name("ttl"), expression.Value(ttl))
	var d DeviceConn
	if err := s.St.UpdateReturn(ctx, store.Change(dk.PK, dk.SK, upd), &d); err != nil {
		return "", fmt.Errorf("connect device %s: %w", deviceID, err)
	}
	if d.Prev == connID {
		return "", nil
	}
	return d.Prev, nil
}

// Conn reads connection connID (store.ErrNotFound once gone or expired).
func (s Store) Conn(ctx context.Context, connID string) (*Conn, error) {
	var c Conn
	k := connKey(connID)
	if err := s.St.Get(ctx, k.PK, k.SK, &c); err != nil {
		return nil, fmt.Errorf("connection %s: %w", connID, err)
	}
	return &c, nil
}

// Device reads device deviceID's live connection (store.ErrNotFound for none).
func (s Store) Device(ctx context.Context, deviceID string) (*DeviceConn, error) {
	var d DeviceConn
	k := deviceKey(deviceID)
	if err := s.St.Get(ctx, k.PK, k.SK, &d); err != nil {
		return nil, fmt.Errorf("connection of device %s: %w", deviceID, err)
	}
	return &d, nil
}

// Forget deletes connection connID and the device row while it still names it.
func (s Store) Forget(ctx context.Context, deviceID, connID string) error {
	if err := s.ForgetConn(ctx, connID); err != nil {
		return err
	}
	dk := deviceKey(deviceID)
	err := s.St.Do(ctx, store.Delete(dk.PK, dk.SK).When(store.Is("connId", connID)))
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("forget connection of device %s: %w", deviceID, err)
	}
	return nil
}

// ForgetConn deletes connection connID's own row only: the one a $connect
// replaced, whose device row names the new connection already.
func (s Store) ForgetConn(ctx context.Context, connID string) error {
	k := connKey(connID)
	if err := s.St.Do(ctx, store.Delete(k.PK, k.SK)); err != nil {
		return fmt.Errorf("forget connection %s: %w", connID, err)
	}
	return nil
}

// Claim takes the first-frame re-send of connection c: true for the one
// frame that clears Fresh (a concurrent frame finds it cleared).
func (s Store) Claim(ctx context.Context, c *Conn) (bool, error) {
	k := connKey(c.ConnID)
	err := s.St.Do(ctx, store.Change(k.PK, k.SK, expression.Remove(expression.Name("fresh"))).
		When(expression.Name("fresh").AttributeExists()))
	if errors.Is(err, store.ErrConditionFailed) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim re-send of %s: %w", c.ConnID, err)
	}
	return true, nil
}

// Ack marks command commandID of device deviceID delivered; an unknown or
// already removed id is no error.
func (s Store) Ack(ctx context.Context, deviceID, commandID string, now time.Time) error {
	err := s.St.Do(ctx, device.AckWrite(deviceID, commandID, now))
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("ack command %s: %w", commandID, err)
	}
	return nil
}
