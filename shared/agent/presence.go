package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// Presence from the agent channel. The channel ($connect authorised by the
// agent token, $disconnect) calls MarkOnline and MarkOffline; a device
// without a channel keeps its heartbeat-based presence (the last-seen index
// and the offline sweep, shared/device).

// MarkOnline records that the channel of the agent of row a (as the token
// check read it) opened: the device moves online (device.online when it was
// not: offline or pending), its last-seen key moves device.ConnectedFor ahead
// so the offline sweep leaves it alone while the connection can live, and the
// agent row carries the channel marker, so heartbeats over HTTP know the
// channel is open without a read (longer interval, no last-seen write). One
// transaction (with the event's outbox row when the status moves). It answers
// the marker, which MarkOffline requires: a $disconnect of an older
// connection then changes nothing. The marker is the connection's end and
// its id connID (unique even when two connects share a millisecond, as
// under a fixed clock); it still compares as a time (device.Agent.Connected).
func (s *Service) MarkOnline(ctx context.Context, a *device.Agent, connID string) (string, error) {
	if device.Blocked(a.Status) {
		return "", ErrDecommissioned
	}
	now := s.Clock.Now()
	until := clock.Format(now.Add(device.ConnectedFor)) + "#" + connID
	to := device.BeatStatus(a.Status)
	tx := (&store.Tx{}).Add(device.ConnectWrites(a, to, now, until)...)
	var evs []*event.Pending
	if to != a.Status {
		ev, err := event.New(s.Clock, eventtype.DeviceOnline, a.OrgID, map[string]any{"deviceId": a.DeviceID, "previousStatus": a.Status})
		if err != nil {
			return "", err
		}
		evs = append(evs, ev)
	}
	if err := s.Events.Commit(ctx, tx, evs...); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			return "", fmt.Errorf("mark device %s online: status changed concurrently: %w", a.DeviceID, store.ErrConditionFailed)
		}
		return "", fmt.Errorf("mark device %s online: %w", a.DeviceID, err)
	}
	return until, nil
}

// MarkOffline records that the channel whose marker is until (MarkOnline's
// answer) closed: an online device moves offline with device.offline and
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
