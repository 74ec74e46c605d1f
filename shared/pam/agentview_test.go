package pam_test

import (
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

func decision(t *testing.T, w *fixture.World, d dev, id string) fixture.Response {
	t.Helper()
	return w.AgentCall(t, http.MethodGet, "/api/v1/agents/"+d.id+"/elevation-requests/"+id, d.tok, nil)
}

// An agent learns a person's decision on a prompt it reported by polling;
// nothing of another device's requests, whatever token it holds.
func TestAgentLearnsTheDecision(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := newDevice(t, w, w.A.ID, w.A1.ID, "asker")
	b := newDevice(t, w, w.A.ID, w.A1.ID, "neighbour")
	c := newDevice(t, w, w.C.ID, "", "elsewhere")
	id, status := submit(t, w, a, "alice")
	if status != "pending" {
		t.Fatalf("submitted %s, want pending (the world's default verdict)", status)
	}
	var got struct {
		ID, Status string
		ExpiresAt  *string
	}
	res := fixture.Expect(t, decision(t, w, a, id), http.StatusOK)
	fixture.Budget(t, res, 3)
	res.Decode(t, &got)
	if got.ID != id || got.Status != "pending" || got.ExpiresAt != nil {
		t.Fatalf("pending request reads %+v", got)
	}

	fixture.Expect(t, respond(t, w, fixture.ATech, id, map[string]any{"decision": "approve"}), http.StatusOK)
	fixture.Expect(t, decision(t, w, a, id), http.StatusOK).Decode(t, &got)
	if got.Status != "approved" || got.ExpiresAt == nil || *got.ExpiresAt != *stored(t, w, w.A.ID, id).ExpiresAt {
		t.Fatalf("approved request reads %+v", got)
	}
	fixture.Expect(t, revoke(t, w, fixture.AAdmin, id, map[string]any{"reason": "done"}), http.StatusOK)
	fixture.Expect(t, decision(t, w, a, id), http.StatusOK).Decode(t, &got)
	if got.Status != "revoked" || got.ExpiresAt != nil {
		t.Fatalf("revoked request reads %+v", got)
	}

	// Another device of the organization, and one of another partner, ask
	// for a's request with their own tokens: 404, as for an unknown id.
	fixture.NotFound(t, decision(t, w, b, id))
	fixture.NotFound(t, decision(t, w, c, id))
	// b's token on a's path is not a's agent.
	fixture.ExpectError(t, w.AgentCall(t, http.MethodGet, "/api/v1/agents/"+a.id+"/elevation-requests/"+id, b.tok, nil), http.StatusUnauthorized, "unauthorized")
	fixture.ExpectError(t, w.AgentCall(t, http.MethodGet, "/api/v1/agents/"+a.id+"/elevation-requests/"+id, "", nil), http.StatusUnauthorized, "unauthorized")
	fixture.Invalid(t, decision(t, w, a, "not-a-uuid"), "requestId")
	// A user's session is not an agent token.
	fixture.ExpectError(t, w.AgentCall(t, http.MethodGet, "/api/v1/agents/"+a.id+"/elevation-requests/"+id, w.Tokens[fixture.AAdmin], nil), http.StatusUnauthorized, "unauthorized")
}
