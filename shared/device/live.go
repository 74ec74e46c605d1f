package device

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
)

// liveSuffix ends the sort key of a device's live row: ORG#<oid> /
// DEVICE#<id>#live sorts right after its device row (ids have one length),
// so one Query of DEVICE#<id> reads both, and an organization's Query of
// DEVICE# reads each device followed by its live row.
const liveSuffix = "#live"

// Live is a device's live row: the part of the device a heartbeat or a
// connect writes (status, last seen, metrics, uptime, the last-seen index
// keys), apart from the described record, so the row the agent keeps
// current stays a few hundred bytes (one write unit) however much the device
// describes. Reads lay it over the device row (Device's fields of the same
// names). Status is the device row's, mirrored in every transition's
// transaction: it is the condition of a heartbeat that writes this row alone.
type Live struct {
	store.Keys
	Status        string   `dynamodbav:"status"`
	LastSeenAt    *string  `dynamodbav:"lastSeenAt,omitempty"`
	Metrics       *Metrics `dynamodbav:"mx,omitempty"`
	UptimeSeconds *int64   `dynamodbav:"uptimeSeconds,omitempty"`
	SeenPK        string   `dynamodbav:"GSI5PK,omitempty"`
	SeenSK        string   `dynamodbav:"GSI5SK,omitempty"`
}

// LiveKey is the key of device id's live row.
func LiveKey(orgID, id string) store.KeyRef {
	return store.KeyRef{PK: store.OrgPK(orgID), SK: "DEVICE#" + id + liveSuffix}
}

// liveCompanion names the live row of a device row (store.Companion).
func liveCompanion(k store.KeyRef) store.KeyRef { return store.KeyRef{PK: k.PK, SK: k.SK + liveSuffix} }

// Split takes the live part out of new device d (enrollment): d keeps the
// described record, the returned row the rest.
func Split(d *Device) *Live {
	k := LiveKey(d.OrgID, d.ID)
	l := &Live{Keys: store.Keys{PK: k.PK, SK: k.SK}, Status: d.Status, LastSeenAt: d.LastSeenAt,
		UptimeSeconds: d.UptimeSeconds, SeenPK: d.SeenPK, SeenSK: d.SeenSK}
	if d.Metrics != (Metrics{}) {
		m := d.Metrics
		l.Metrics = &m
	}
	d.LastSeenAt, d.UptimeSeconds, d.Metrics, d.SeenPK, d.SeenSK = nil, nil, Metrics{}, "", ""
	return l
}

// fold lays each live row of items (a Query of DEVICE# rows, in key order)
// over the device row before it and returns the devices. A device written
// before live rows existed has none and reads as stored.
func fold(items []store.Item) ([]Device, error) {
	out := []Device{}
	var last store.Item
	for _, it := range items {
		if sk := store.Str(it["SK"]); strings.HasSuffix(sk, liveSuffix) {
			if last != nil && store.Str(last["SK"])+liveSuffix == sk {
				store.Overlay(last, it)
			}
			continue
		}
		if last != nil {
			var d Device
			if err := store.Unmarshal(last, &d); err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		last = it
	}
	if last != nil {
		var d Device
		if err := store.Unmarshal(last, &d); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// devices reads q's device rows with their live rows.
func (s Store) devices(ctx context.Context, q store.Query) ([]Device, error) {
	items, err := s.St.All(ctx, q)
	if err != nil {
		return nil, err
	}
	return fold(items)
}

// Reindex is the device rows' list-index backfill (shared/backfill): live
// rows are not listed.
func Reindex() store.Reindex {
	return store.Reindex{Kind: "device", SKPrefix: "DEVICE#", From: []string{"hostname"},
		Except: func(sk string) bool { return strings.HasSuffix(sk, liveSuffix) },
		Keys: func(it store.Item) (store.Keys, error) {
			var d Device
			if err := store.Unmarshal(it, &d); err != nil {
				return store.Keys{}, err
			}
			SetListKeys(&d)
			return d.Keys, nil
		}}
}

// ---- writes of the live row ------------------------------------------------

// liveBeat is the live row update of heartbeat b moving the device to status
// to: last seen, metrics and uptime, and the last-seen index keys when seen
// is not "".
func liveBeat(id, to string, b Beat, seen string) expression.UpdateBuilder {
	upd := expression.Set(expression.Name("status"), expression.Value(to)).
		Set(expression.Name("lastSeenAt"), expression.Value(clock.Format(b.At)))
	if to == StatusOnline && seen != "" {
		upd = upd.Set(expression.Name("GSI5PK"), expression.Value(SeenPK(id))).Set(expression.Name("GSI5SK"), expression.Value(seen))
	}
	if b.Metrics != nil {
		upd = upd.Set(expression.Name("mx"), expression.Value(*b.Metrics))
	}
	if b.UptimeSeconds != nil {
		upd = upd.Set(expression.Name("uptimeSeconds"), expression.Value(*b.UptimeSeconds))
	}
	return upd
}

// LiveBeatWrite is a heartbeat's write of the live row while the status stays
// from (required: a transition since the token check moved it, and a move
// offline took its last-seen keys).
func LiveBeatWrite(orgID, id, from string, b Beat, seen string) *store.Write {
	k := LiveKey(orgID, id)
	return store.Change(k.PK, k.SK, liveBeat(id, from, b, seen)).When(store.Is("status", from)).Exists()
}

// liveMove is the live row's write in a transition's transaction: the
// device row's condition guards it, so it has none (and it makes the live
// row of a device written before live rows existed).
func liveMove(orgID, id string, upd expression.UpdateBuilder) *store.Write {
	k := LiveKey(orgID, id)
	return store.Change(k.PK, k.SK, upd)
}

// liveStatus sets status to on the live row and, unless to is online, takes
// it out of the last-seen index.
func liveStatus(to string) expression.UpdateBuilder {
	upd := expression.Set(expression.Name("status"), expression.Value(to))
	if to != StatusOnline {
		upd = upd.Remove(expression.Name("GSI5PK")).Remove(expression.Name("GSI5SK"))
	}
	return upd
}

// liveConnect is a connect's live row update (status to, seen at now, and
// the last-seen key sk while online).
func liveConnect(id, to, sk string, now time.Time) expression.UpdateBuilder {
	upd := expression.Set(expression.Name("status"), expression.Value(to)).
		Set(expression.Name("lastSeenAt"), expression.Value(clock.Format(now)))
	if to == StatusOnline {
		upd = upd.Set(expression.Name("GSI5PK"), expression.Value(SeenPK(id))).Set(expression.Name("GSI5SK"), expression.Value(sk))
	}
	return upd
}

// staleKey reads a last-seen index row: a live row's, or a device row's
// written before live rows existed.
func staleKey(pk, sk, seen string) StaleKey {
	live := strings.HasSuffix(sk, liveSuffix)
	id := strings.TrimSuffix(strings.TrimPrefix(sk, "DEVICE#"), liveSuffix)
	return StaleKey{OrgID: strings.TrimPrefix(pk, store.OrgPK("")), ID: id, SeenSK: seen, Live: live}
}

// errNoDevice is a Query of one device that found no device row.
func errNoDevice(id string) error { return fmt.Errorf("get device %s: %w", id, store.ErrNotFound) }
