package agent

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gale-rmm/gale/shared/device"
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
// Elevation ingest (the hot route) folds the count into the write it makes
// anyway: elevationCaller admits the prompt from the window as read
// (ratelimit.Limiter.Admit: a full window is 429 there, before the body is
// read, and nothing is written), and pam.Ingest settles the admitted count
// once (ratelimit.Pending.Settle): in its transaction, or on its own when the
// prompt is refused (a bad body, a failed store) or loses a race on the
// window, so every authenticated request counts once.
//
// The prompt's path enters the package once: the handler (elevation.go),
// elevationCaller, the token check's slot (read once through caller), then
// the window's admission, the body's decode and pam.Ingest, none of which
// calls back into this package.

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
// into sl (every ingest route), the count is one write whatever the row's
// state.
func (s *Service) count(ctx context.Context, id string, sl *slot) error {
	if sl != nil && sl.windowRead {
		sl.windowRead = false // read once: a second count meets a changed row
		_, err := s.Limits.CountFrom(ctx, windowKey(id), ratelimit.AgentIngest, sl.window, nil)
		return err
	}
	_, err := s.Limits.CountOn(ctx, windowKey(id), ratelimit.AgentIngest, nil)
	return err
}

// elevationCaller is the preamble of elevation ingest: the authenticated
// agent of device id, and its prompt's count, admitted from the window the
// token check read (429 when full, before the body is read), which
// pam.Ingest settles. The token check's slot is read first and nothing of
// this file follows it, so the prompt's path enters the package once.
func (s *Service) elevationCaller(ctx context.Context, id string) (*device.Agent, *ratelimit.Pending, error) {
	a, sl, err := s.caller(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	// The window is read with the token on every route but the heartbeat.
	// Outside the router it was not: taken as absent, its count's write then
	// fails on a row that exists, and the count goes on as after any race.
	var read store.Item
	if sl != nil && sl.windowRead {
		read, sl.windowRead = sl.window, false
	}
	c, err := s.Limits.Admit(ratelimit.BucketKey(ratelimit.AgentIngest, id), ratelimit.AgentIngest, read)
	if err != nil {
		return nil, nil, err
	}
	return a, c, nil
}
