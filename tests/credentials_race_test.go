package tests

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"pgregory.net/rapid"

	svcprincipal "github.com/gale-rmm/gale/shared/principal"
	"github.com/gale-rmm/gale/tests/fixture"
)

// Kill switches racing the operations they stop (ATTACKS 9,
// docs/decisions.md#kill-switches-always-win): the sequence test's ops that
// send a lifecycle change together with a burst of the credential operations it
// must stop. The switch answers 200 whatever runs beside it, and check() then
// finds that no key it stopped still authenticates.

// collector is a testing.TB for requests served from several goroutines: it
// keeps what fixture.Do reports (contract, budget) and hands it to rapid
// after the burst, from the sequence's own goroutine.
type collector struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (c *collector) Helper() {}
func (c *collector) Errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}
func (c *collector) Fatalf(format string, args ...any) { c.Errorf(format, args...); panic(c) }
func (c *collector) Error(args ...any)                 { c.Errorf("%s", fmt.Sprint(args...)) }
func (c *collector) Fatal(args ...any)                 { c.Fatalf("%s", fmt.Sprint(args...)) }

// burst serves reqs at once and answers their responses in order.
func (s *seq) burst(reqs []fixture.Request) []fixture.Response {
	c := &collector{TB: s.t}
	out := make([]fixture.Response, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		ip := s.pw.ip.Add(1)
		r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:1", ip/65536%256, ip/256%256, ip%256)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil && p != c {
					panic(p)
				}
			}()
			out[i] = fixture.Do(c, s.pw.API, r)
		}()
	}
	wg.Wait()
	for _, e := range c.errs {
		s.rt.Fatalf("burst: %s", e)
	}
	for _, res := range out {
		if ok(res) && s.op != "" {
			s.pw.answered[s.op]++
		}
	}
	return out
}

// playRace plays the racing ops; it answers false for any other op.
func (s *seq) playRace(op string) bool {
	switch op {
	case "spKillRace":
		s.spKillRace()
	case "removeRace":
		s.removeRace()
	default:
		return false
	}
	return true
}

// spKillRace disables a principal while four rotations of it and four
// migrations of user keys into it run: the disable answers 200 (when the
// principal was active), and afterwards no key of the principal, old, rotated
// or migrated, authenticates (check()).
func (s *seq) spKillRace() {
	sp := s.pickSP()
	if sp == nil {
		return
	}
	s.last = fixture.AAdmin
	tok := s.pw.Tokens[fixture.AAdmin]
	before, err := svcprincipal.Store{St: s.pw.Env.Store}.Principal(s.t.Context(), s.pw.A.ID, sp.id)
	must(s.t, err)
	reqs := []fixture.Request{{Method: http.MethodPost, Path: "/api/v1/service-principals/" + sp.id + "/disable", Token: tok}}
	var migrated []*key
	for range 4 {
		reqs = append(reqs, fixture.Request{Method: http.MethodPost, Path: "/api/v1/service-principals/" + sp.id + "/rotate", Token: tok})
		if k := s.pickKey(); k != nil && k.principal == "" && !slices.Contains(migrated, k) {
			migrated = append(migrated, k)
			reqs = append(reqs, fixture.Request{Method: http.MethodPost, Path: "/api/v1/service-principals/" + sp.id + "/migrate-key",
				Token: tok, Body: map[string]any{"keyId": k.id}})
		}
	}
	rapid.Just(0).Draw(s.rt, "race") // marks the burst in a shrunk sequence
	res := s.burst(reqs)
	s.logf("org A admin disables principal %s (was %s) against %d rotations and migrations: %d", sp.id, before.Status, len(reqs)-1, res[0].Status)
	if before.Status == svcprincipal.Active && res[0].Status != http.StatusOK {
		s.fail("disabling active principal %s answered %d %s", sp.id, res[0].Status, res[0].Body)
	}
	mi := 0
	for i, r := range reqs[1:] {
		got := res[i+1]
		if !ok(got) {
			if r.Body != nil {
				mi++
			}
			continue
		}
		if r.Body == nil { // a rotation
			var rot struct{ APIKeyID, Key string }
			got.Decode(s.t, &rot)
			s.keys = append(s.keys, &key{id: rot.APIKeyID, raw: rot.Key, principal: sp.id})
			continue
		}
		migrated[mi].principal, migrated[mi].creator = sp.id, ""
		mi++
	}
}

// removeRace removes a subject's membership of A while the subject creates
// and rotates keys: the removal answers 200 (when the membership exists), and
// afterwards none of the subject's keys authenticates (check(): its creator
// holds nothing in A).
func (s *seq) removeRace() {
	i, sb := s.subject()
	if sb.token == "" {
		return
	}
	name := fmt.Sprintf("subject %d", i)
	s.last = fixture.AAdmin
	_, m, _ := s.membership(sb.id)
	reqs := []fixture.Request{{Method: http.MethodDelete, Path: "/api/v1/users/" + sb.id + "?orgId=" + s.pw.A.ID, Token: s.pw.Tokens[fixture.AAdmin]}}
	var own, known []*key
	for _, k := range s.keys {
		if k.creator == name {
			known = append(known, k)
		}
	}
	for _, k := range s.keys {
		if k.creator == name && len(own) < 3 {
			own = append(own, k)
			reqs = append(reqs, fixture.Request{Method: http.MethodPost, Path: "/api/v1/api-keys/" + k.id + "/rotate", Token: sb.token})
		}
	}
	creates := 6 - len(own)
	for range creates {
		reqs = append(reqs, fixture.Request{Method: http.MethodPost, Path: "/api/v1/api-keys", Token: sb.token,
			Body: map[string]any{"orgId": s.pw.A.ID, "name": "race", "scopes": []string{"devices:read"}}})
	}
	rapid.Just(0).Draw(s.rt, "race")
	res := s.burst(reqs)
	s.logf("org A admin removes subject %d against %d of its key operations: %d", i, len(reqs)-1, res[0].Status)
	if m != nil && res[0].Status != http.StatusOK {
		s.fail("removing subject %d's membership answered %d %s", i, res[0].Status, res[0].Body)
	}
	if ok(res[0]) {
		sb.accepted = false
	}
	for j, got := range res[1:] {
		if !ok(got) {
			continue
		}
		var k struct{ ID, Key string }
		got.Decode(s.t, &k)
		if j < len(own) {
			own[j].raw = k.Key
			continue
		}
		s.keys = append(s.keys, &key{id: k.ID, raw: k.Key, creator: name})
	}
	if ok(res[0]) {
		// Keys the removal found are revoked; one created in the burst may
		// miss its revocation (the creator index is eventually consistent),
		// and must then fail at authentication: check() holds both.
		for _, k := range known {
			k.removed = true
		}
	}
}
