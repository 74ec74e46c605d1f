package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// inventory applies an inventory upload's conditional write (it fails when
// the facts are unchanged) with device.updated in the same transaction: an
// upload that changes the device record raises the event, an unchanged one
// writes nothing (docs/decisions.md#device-update-events: device.updated
// fires on inventory uploads that change the device record, never on
// heartbeats).
func (s *Service) inventory(ctx context.Context, a *device.Agent, w *store.Write, part string) error {
	ev, err := event.New(s.Clock, eventtype.DeviceUpdated, a.OrgID, map[string]any{"deviceId": a.DeviceID, "changed": []string{part}})
	if err != nil {
		return err
	}
	err = s.Events.Commit(ctx, (&store.Tx{}).Add(w), ev)
	if errors.Is(err, store.ErrConditionFailed) {
		return nil // unchanged
	}
	if err != nil {
		return fmt.Errorf("store %s of %s: %w", part, a.DeviceID, err)
	}
	return nil
}
