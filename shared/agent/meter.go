package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
)

// The per-device ingest limit (ratelimit.AgentIngest, 600 a minute, shared by
// the hardware, network, software, command-result and elevation routes) is
// shared/ratelimit's flat row RL#agent-ingest-device#<id> / WIN.
//
// The token check of every ingest route reads the agent row and the window
// row in one BatchGetItem, so a count knows the row and is one conditional
// write even when it makes the row or rebases it (Limiter.CountFrom).
// Elevation ingest (the hot route with a call budget of 3) folds the count
// into calls it makes anyway: a full window is refused from the row read
// (429, no write), and the ingest's one transaction carries the count's conditional
// write (ratelimit.Limiter.CountWrite, which also makes a new row or rebases
// one from the row read). When that write fails its condition (the window
// filled or the row changed in between),
// the request counts on its own (CountOn: exact, 429 when the window is full)
// and commits again without the count. A request refused after
// authentication (a bad body, a failed store) is counted on its own, so
// every authenticated request counts once.

// heartbeatPattern is the ServeMux pattern of the heartbeat, the one token
// route that does not count against the ingest window (and so does not read
// it).
const heartbeatPattern = http.MethodPost + " /api/v1/agents/{id}/heartbeat"

// agentAndWindow reads device id's agent row and ingest window in one
// BatchGetItem (the window nil when absent).
func (s *Service) agentAndWindow(ctx context.Context, id string) (*device.Agent, store.Item, error) {
	ak, wk := device.AgentKey(id), windowKey(id)
	// The window is read past its ttl too: a count rewrites such a row
	// whole (ratelimit.Limiter.CountWrite) instead of making one anew.
	items, err := s.Devices.St.BatchGetPastTTL(ctx, ak, wk)
	if err != nil {
		return nil, nil, fmt.Errorf("get agent %s: %w", id, err)
	}
	it, ok := items[ak.PK+"|"+ak.SK]
	if !ok {
		return nil, nil, fmt.Errorf("get agent %s: %w", id, store.ErrNotFound)
	}
	var a device.Agent
	if err := store.Unmarshal(it, &a); err != nil {
		return nil, nil, err
	}
	return &a, items[wk.PK+"|"+wk.SK], nil
}

// windowKey is device id's ingest window row.
func windowKey(id string) store.KeyRef { return ratelimit.BucketKey(ratelimit.AgentIngest, id) }

// count counts one event of device id on its own: 429 with retryAfter when
// the window is full (nothing written). When the token check read the window
// (every ingest route), the count is one write whatever the row's state.
func (s *Service) count(ctx context.Context, id string) error {
	if sl := slotFrom(ctx); sl != nil && sl.windowRead {
		sl.windowRead = false // read once: a second count meets a changed row
		_, err := s.Limits.CountFrom(ctx, windowKey(id), ratelimit.AgentIngest, sl.window, nil)
		return err
	}
	_, err := s.Limits.CountOn(ctx, windowKey(id), ratelimit.AgentIngest, nil)
	return err
}

// meter is the count of one elevation ingest (pam.Meter): the window row as
// the token check read it.
type meter struct {
	s       *Service
	id      string
	window  store.Item // nil: absent or expired
	counted bool
}

// Write is the count's write in the ingest's transaction.
func (m *meter) Write() *store.Write {
	return m.s.Limits.CountWrite(windowKey(m.id), ratelimit.AgentIngest, m.window, nil)
}

// Committed records that the transaction carrying Write committed.
func (m *meter) Committed() { m.counted = true }

// Fallback counts the request on its own after Write failed its condition.
func (m *meter) Fallback(ctx context.Context) error {
	m.counted = true
	return m.s.count(ctx, m.id)
}

// elevationCaller is the preamble of elevation ingest: the authenticated
// agent of device id, and its meter, refused with 429 when the window read
// with the agent row is full.
func (s *Service) elevationCaller(ctx context.Context, id string) (*device.Agent, *meter, error) {
	a, err := s.caller(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	m := &meter{s: s, id: id}
	sl := slotFrom(ctx)
	if sl == nil || !sl.windowRead {
		// Not read with the token (a caller outside the router): count now.
		m.counted = true
		return a, m, s.count(ctx, id)
	}
	m.window = sl.window
	if full, after := s.Limits.Full(ratelimit.AgentIngest, m.window, s.Clock.Now()); full {
		m.counted = true // refused events do not count
		return nil, nil, fault.RateLimited("Too many requests", after)
	}
	return a, m, nil
}

// uncounted counts a request refused after authentication (bad body, store
// failure) that its transaction did not count: the window's 429 wins, as
// when the limit was checked before the body.
func (m *meter) uncounted(ctx context.Context, err error) error {
	if m.counted {
		return err
	}
	m.counted = true
	var fe *fault.Error
	if cerr := m.s.count(ctx, m.id); errors.As(cerr, &fe) && fe.Kind == fault.KindRateLimited {
		return cerr
	}
	return err
}
