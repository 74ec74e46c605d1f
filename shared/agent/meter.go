package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
)

// The per-device ingest limit (ratelimit.AgentIngest, 600 a minute, shared by
// the hardware, network, software, command-result and elevation routes) is
// the exact sliding window of shared/ratelimit on its row
// RL#agent-ingest-device#<id> / WIN, plus a version attribute v that every
// count adds one to.
//
// Every route but elevation ingest counts as ratelimit.Take does: one
// UpdateItem that spends a slot and returns the row, and a refund when that
// was one too many.
//
// Elevation ingest (the hot route with a call budget of 3) folds the count
// into calls it makes anyway: the token check reads the agent row and the
// window row in one BatchGetItem, a full window is refused there (429, no
// write), and the ingest's one transaction spends the slot under the
// condition that v is still the version read. Two concurrent prompts of one
// device that both read version N cannot both commit: the loser counts
// itself on its own (the Take path: exact, 429 when the window filled in
// between) and commits again without the count. A request refused after
// authentication (a bad body, a failed store) is counted on its own, so
// every authenticated request counts once, as before.

const versionAttr = "v"

// elevationPattern is the ServeMux pattern of elevation ingest, whose token
// check also reads the window.
const elevationPattern = http.MethodPost + " /api/v1/agents/{id}/elevation-requests"

// agentAndWindow reads device id's agent row and ingest window in one
// BatchGetItem (the window nil when absent or expired).
func (s *Service) agentAndWindow(ctx context.Context, id string) (*device.Agent, store.Item, error) {
	ak, wk := device.AgentKey(id), windowKey(id)
	items, err := s.Devices.St.BatchGet(ctx, ak, wk)
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

// spend is the update counting one event at now: the slot, the version and
// the row's ttl.
func spend(c ratelimit.Count, now time.Time) expression.UpdateBuilder {
	w := ratelimit.AgentIngest.Window
	return c.Spend(expression.UpdateBuilder{}).
		Add(expression.Name(versionAttr), expression.Value(1)).
		Set(expression.Name("ttl"), expression.Value(store.TTL(now.Add(w+2*ratelimit.Slot(w)))))
}

// ingestLimit is the limit in force (tests override it by name).
func (s *Service) ingestLimit() int {
	if n, ok := s.Limits.Limits[ratelimit.AgentIngest.Name]; ok {
		return n
	}
	return ratelimit.AgentIngest.Limit
}

// count counts one event of device id on its own (as ratelimit.Take, with the
// version): 429 with retryAfter when it is one too many, taken back.
func (s *Service) count(ctx context.Context, id string) error {
	now := s.Clock.Now()
	k := windowKey(id)
	c := ratelimit.NewCount(ratelimit.AgentIngest.Window, now)
	item, err := s.Devices.St.Update(ctx, store.Change(k.PK, k.SK, spend(c, now)).When(c.Fresh()))
	if errors.Is(err, store.ErrConditionFailed) && c.In(item) {
		err = nil // an earlier attempt counted it; its answer was lost
	}
	if err != nil {
		return fmt.Errorf("rate limit %s: %w", ratelimit.AgentIngest.Name, err)
	}
	w := ratelimit.Tally(item, ratelimit.AgentIngest.Window, now)
	if w.Count > s.ingestLimit() {
		if err := s.Devices.St.Do(ctx, c.Refund(k.PK, k.SK)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return fmt.Errorf("rate limit %s: refund: %w", ratelimit.AgentIngest.Name, err)
		}
		return fault.RateLimited("Too many requests", w.RetryAfter(now))
	}
	return nil
}

// meter is the count of one elevation ingest (pam.Meter): the window row as
// the token check read it.
type meter struct {
	s       *Service
	id      string
	window  store.Item // nil: absent or expired
	counted bool
}

// Write spends the slot in the ingest's transaction, on condition that the
// window is the version read (absent or expired when none was read).
func (m *meter) Write() *store.Write {
	now := m.s.Clock.Now()
	k := windowKey(m.id)
	var cond expression.ConditionBuilder
	if v, ok := m.window[versionAttr].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		cond = expression.Name(versionAttr).Equal(expression.Value(n))
	} else {
		// The store reads a row at or past its ttl as absent (store.Store.expired).
		cond = expression.Name(versionAttr).AttributeNotExists().Or(expression.Name("ttl").LessThanEqual(expression.Value(now.Unix())))
	}
	c := ratelimit.NewCount(ratelimit.AgentIngest.Window, now)
	return store.Change(k.PK, k.SK, spend(c, now)).When(cond.And(c.Fresh()))
}

// Committed records that the transaction carrying Write committed.
func (m *meter) Committed() { m.counted = true }

// Fallback counts the request on its own after Write lost a race.
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
	if full, after := s.Limits.Refuses(ratelimit.AgentIngest, m.window, s.Clock.Now()); full {
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
