package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// Presence from the agent channel. The channel ($connect authorised by the
// agent token, $disconnect) calls Connect and Disconnect; a device without a
// channel keeps its heartbeat-based presence (the last-seen index and the
// offline sweep, shared/device).

// Connect records that connection connID of device deviceID opened (its
// token was checked by the channel's authorizer) and answers the connection
// it replaced ("" for none), which the caller closes, even when Connect
// fails after the marker's write (it answers the replaced one then too).
// One case cannot name it: the write applied, its answer was lost, and a
// newer connect overtook it before the SDK's retry, whose condition then
// fails on a row that no longer holds what this write replaced. The connect
// is refused as replaced (ErrReplaced, ""), and the connection left open is
// closed at its next frame (shared/channel). The agent row takes
// the channel marker (the connection's end and id: unique even when two
// connects share a millisecond, as under a fixed clock; it still compares
// as a time, device.Agent.Connected) in one UpdateItem that also answers the
// marker it replaced (device.ConnectMarkerWrite), so heartbeats over HTTP
// know the channel is open without a read, and only this connection's
// $disconnect can make the device offline. Then, by the status that write
// answers:
//
//   - offline or pending: the device moves online with device.online, as a
//     heartbeat would (one transaction: device row, agent row, live row,
//     outbox);
//   - online: nothing more, unless the last-seen key leaves less than a
//     connection's life (device.SeenDue): then it moves ConnectedAhead ahead
//     (live row, then the agent row's copy), so the offline sweep leaves
//     the device alone while this connection and the next ones can live,
//     at about 0.2 WCU an hour instead of a transaction per connect;
//   - maintenance, updating: people's states, kept.
//
// A decommissioned or quarantined device is refused (ErrDecommissioned),
// marker unwritten.
func (s *Service) Connect(ctx context.Context, deviceID, connID string) (string, error) {
	now := s.Clock.Now()
	until := clock.Format(now.Add(device.ConnectedFor)) + "#" + connID
	var a device.Agent
	err := s.Devices.St.UpdateReturn(ctx, device.ConnectMarkerWrite(deviceID, until), &a)
	if errors.Is(err, store.ErrConditionFailed) {
		cur, err := s.settleMarker(ctx, deviceID, until)
		if err != nil {
			return "", err
		}
		a = *cur
	} else if err != nil {
		return "", fmt.Errorf("connect device %s: %w", deviceID, err)
	}
	replaced := device.MarkerConn(a.ChannelPrev)
	if replaced == connID {
		replaced = "" // a retried connect's own marker
	}
	switch to := device.BeatStatus(a.Status); {
	case to != a.Status:
		err = s.markOnline(ctx, &a, until)
		if errors.Is(err, store.ErrConditionFailed) {
			err = s.raced(ctx, deviceID, until)
		}
	case a.Status == device.StatusOnline && device.SeenDue(a.SeenKey, now):
		err = s.moveSeen(ctx, &a, now)
	}
	return replaced, err
}

// ErrReplaced refuses a connect that a newer connection of the same device
// overtook (409): the newer one is live.
var ErrReplaced = fault.Conflict("Connection replaced by a newer one").WithCode(fault.CodeRaceLost)

// settleMarker answers why a connect's marker write failed its condition:
// the device is blocked or gone (ErrDecommissioned), a newer connection
// holds the marker (ErrReplaced), or the write had applied, its answer was
// lost and another write followed (the row as it is now: the connect
// succeeded).
func (s *Service) settleMarker(ctx context.Context, deviceID, until string) (*device.Agent, error) {
	a, err := s.Devices.Agent(ctx, deviceID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, ErrDecommissioned
	case err != nil:
		return nil, fmt.Errorf("connect device %s: %w", deviceID, err)
	case a.Status == device.StatusDecommissioned || a.Status == device.StatusQuarantined:
		return nil, ErrDecommissioned
	case a.ChannelUntil != until:
		return nil, ErrReplaced
	}
	return a, nil
}

// raced settles a connect whose move online lost to a concurrent change:
// another connect of the device brought it online (with its key ahead), or
// replaced this one's marker (and makes the move itself): nothing is left to
// do. Otherwise (people's status change) the connect fails and the agent
// retries.
func (s *Service) raced(ctx context.Context, deviceID, until string) error {
	a, err := s.Devices.Agent(ctx, deviceID)
	if err != nil {
		return fmt.Errorf("connect device %s: %w", deviceID, err)
	}
	if a.Status == device.StatusOnline || a.ChannelUntil != until {
		return nil
	}
	return fmt.Errorf("connect device %s: status changed concurrently: %w", deviceID, store.ErrConditionFailed)
}

// markOnline moves the device of agent row a (as its connect left it) online
// with device.online: device row, agent row, live row and the event's
// outbox row in one transaction that requires a's status.
func (s *Service) markOnline(ctx context.Context, a *device.Agent, until string) error {
	now := s.Clock.Now()
	to := device.BeatStatus(a.Status)
	tx := (&store.Tx{}).Add(device.ConnectWrites(a, to, now, until)...)
	ev, err := event.New(s.Clock, eventtype.DeviceOnline, a.OrgID, map[string]any{"deviceId": a.DeviceID, "previousStatus": a.Status})
	if err != nil {
		return err
	}
	if err := s.Events.Commit(ctx, tx, ev); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			return fmt.Errorf("mark device %s online: status changed concurrently: %w", a.DeviceID, store.ErrConditionFailed)
		}
		return fmt.Errorf("mark device %s online: %w", a.DeviceID, err)
	}
	return nil
}

// moveSeen moves the last-seen key of online device a ConnectedAhead ahead,
// then records it on the agent row (two single writes: a transaction would
// double their units, and the agent row's copy is a hint: lost, the next
// connect moves the key again). A device no longer online keeps its keys.
func (s *Service) moveSeen(ctx context.Context, a *device.Agent, now time.Time) error {
	sk := device.ConnectedSK(a.DeviceID, now)
	err := s.Devices.Do(ctx, device.ConnectedSeenWrite(a, sk))
	if errors.Is(err, store.ErrConditionFailed) {
		// Moved out of online since the marker's write: by people
		// (maintenance: no key to keep), or by the offline sweep, which
		// found the old key due (then this connect brings it back).
		now, err := s.Devices.Agent(ctx, a.DeviceID)
		if err != nil {
			return fmt.Errorf("connect device %s: %w", a.DeviceID, err)
		}
		if device.BeatStatus(now.Status) == now.Status {
			return nil
		}
		return s.markOnline(ctx, now, now.ChannelUntil)
	}
	if err != nil {
		return fmt.Errorf("connect device %s: last-seen key: %w", a.DeviceID, err)
	}
	if err := s.Devices.Do(ctx, device.SeenKeyWrite(a.DeviceID, sk)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("connect device %s: last-seen key copy: %w", a.DeviceID, err)
	}
	return nil
}

// Disconnect records that connection connID of device deviceID closed: the
// device goes offline (MarkOffline) only while its marker names connID, so
// the close of a replaced connection changes nothing. Reports whether the
// device moved.
func (s *Service) Disconnect(ctx context.Context, deviceID, connID string) (bool, error) {
	a, err := s.Devices.Agent(ctx, deviceID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil // the device is gone
	}
	if err != nil {
		return false, err
	}
	if a.ChannelUntil == "" || a.ChannelConn() != connID {
		return false, nil // replaced by a newer connection, or forgotten
	}
	return s.MarkOffline(ctx, a, a.ChannelUntil)
}

// MarkOffline records that the channel whose marker is until (Connect's)
// closed: an online device moves offline with device.offline and
// leaves the last-seen index (its next heartbeat over HTTP brings it back
// with device.online). A device whose marker has changed since (a newer
// connection) or that is not online (maintenance, updating: people's states)
// keeps its status; reports whether it moved.
func (s *Service) MarkOffline(ctx context.Context, a *device.Agent, until string) (bool, error) {
	if a.ChannelUntil != until {
		return false, nil // a newer connection's (the row a was read from says so): no write to refuse
	}
	if a.Status != device.StatusOnline {
		err := s.Devices.Do(ctx, device.ForgetChannelWrite(a.DeviceID, until))
		if err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return false, fmt.Errorf("mark device %s offline: %w", a.DeviceID, err)
		}
		return false, nil
	}
	now := s.Clock.Now()
	ev, err := event.New(s.Clock, eventtype.DeviceOffline, a.OrgID, map[string]any{"deviceId": a.DeviceID, "previousStatus": a.Status,
		"lastSeenAt": clock.Format(now)})
	if err != nil {
		return false, err
	}
	tx := (&store.Tx{}).Add(device.DisconnectWrites(a, until, now)...)
	err = s.Events.Commit(ctx, tx, ev)
	var te *store.TxError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &te):
		return false, nil // a newer connection, or another transition, won
	}
	return false, fmt.Errorf("mark device %s offline: %w", a.DeviceID, err)
}
