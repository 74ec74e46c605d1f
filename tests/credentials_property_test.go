package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"pgregory.net/rapid"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/passhash"
	svcprincipal "github.com/gale-rmm/gale/shared/principal"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

// TestCredentialSequences plays random sequences of 20-60 operations on
// memberships and credentials (invite, accept, suspend, restore, remove, role
// change, rename, sign-in; API key create, rotate, PATCH, revoke; service
// principal create, rotate, disable, migrate-key) by random members of the
// cast of ATTACKS.md against the emulator, and checks after every step:
//
//   - no membership is active (or suspended after being active) unless the
//     account itself accepted its invitation; the partner invitation, never
//     accepted, never grants anything and never wins a sign-in;
//   - no credential was issued acting with a permission its issuing caller
//     lacked (checked when each answer arrives), and no key works beyond its
//     owner's current permissions: a user key works only while its creator is
//     an active, accepted member of A holding devices:read, a principal's key
//     only while the principal is active; a removed creator's keys are
//     revoked and stay revoked after a re-invitation;
//   - no account-wide field (name, status) changes through a tenant that does
//     not hold every accepted membership of the account, and an unaccepted
//     membership shows none of the account's own fields.
//
// A failing sequence is shrunk by rapid and printed step by step. `make test`
// runs a fixed seed and a random one (printed by rapid on failure; rerun with
// -rapid.seed=<seed>); -rapid.checks raises the number of sequences.
func TestCredentialSequences(t *testing.T) {
	pw := newPropWorld(t)
	checks := 4
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() != "100" {
		fmt.Sscan(f.Value.String(), &checks) // an explicit -rapid.checks wins
	}
	run := func(name, seed string) {
		t.Run(name, func(t *testing.T) {
			must(t, flag.Set("rapid.checks", fmt.Sprint(checks)))
			must(t, flag.Set("rapid.seed", seed))
			rapid.Check(t, func(rt *rapid.T) { pw.sequence(t, rt) })
		})
	}
	explicit := flag.Lookup("rapid.seed").Value.String()
	if explicit != "0" {
		run("seed "+explicit, explicit)
	} else {
		run("fixed seed", "20261126")
		run("random seed", "0")
	}
	t.Logf("credential sequences: %d sequences, %d steps, %d invariant checks; 2xx answers per operation: %v",
		pw.sequences.Load(), pw.steps.Load(), pw.checks.Load(), pw.answered)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// propWorld is the cast (fixture.World plus a custom role holding only
// organizations:write and devices:read) and what the invariants need.
type propWorld struct {
	*fixture.World
	t     *testing.T
	hash  string
	perms map[string]authz.Set // what each cast member holds in organization A
	ip    atomic.Int64

	sequences, steps, checks atomic.Int64
	// answered counts the 2xx answers per operation (sequences run one at a time).
	answered map[string]int
	sso      *ssoWorld
	pam      *pamState // A's PAM objects and their authors (credentials_pam_test.go)
}

const (
	slice        = "org A writer (custom role: organizations:write, devices:read)"
	subjPassword = "Tangerine-Kettle-42!"
	ownName      = "Own Account Name"
)

func roleSet(id string) authz.Set {
	for _, r := range role.SystemRoles() {
		if r.ID == id {
			return authz.NewSet(r.PermissionList()...)
		}
	}
	return authz.Set{}
}

func newPropWorld(t *testing.T) *propWorld {
	pki := fixture.NewPKI(t)
	w := fixture.NewWorldWith(t, pki.SSOVars(), "users", "auth", "api-keys", "service-principals", "devices", "roles", "sso",
		"pam", "agents", "enrollment-keys")
	hash, err := passhash.Hash(subjPassword)
	must(t, err)
	cr := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/roles", fixture.AAdmin, map[string]any{"name": "Org writer",
		"permissions": []map[string]string{{"resource": "organizations", "action": "write"}, {"resource": "devices", "action": "read"}}}),
		http.StatusCreated).JSON(t)
	c := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: cr["id"].(string),
		RoleOwner: "ORG#" + w.A.ID, MFA: true})
	w.Tokens[slice], w.Users[slice] = c.Token, c.UserID
	all := authz.NewSet(authz.AdminAll)
	pw := &propWorld{World: w, t: t, hash: hash, answered: map[string]int{}, perms: map[string]authz.Set{
		fixture.AAdmin: roleSet(role.OrgAdminID), fixture.ATech: roleSet(role.OrgTechnicianID), fixture.AViewer: roleSet(role.OrgViewerID),
		fixture.ARestricted: roleSet(role.OrgAdminID), fixture.PXAdmin: all, fixture.SysAdmin: all, fixture.PYAdmin: {},
		fixture.BAdmin: {}, fixture.CAdmin: {}, slice: authz.NewSet(authz.OrgsWrite, authz.DevicesRead),
	}}
	pw.sso = pw.ssoSetup(t, pki)
	pw.pam = pw.pamSetup(t)
	return pw
}

// actors are the cast members that act on A's memberships and credentials.
var actors = []string{fixture.AAdmin, fixture.ATech, fixture.AViewer, fixture.ARestricted, fixture.PXAdmin, fixture.SysAdmin,
	fixture.PYAdmin, fixture.BAdmin, fixture.CAdmin, slice}

// subject is an existing account (with an accepted membership of C) that the
// cast invites into A.
type subject struct {
	id, email string
	token     string // a session in A (authentication decides whether it works)
	accepted  bool   // the account accepted A's invitation since it was last made
	name      string // the account-wide fields as the account (or a holder of every membership) left them
	status    user.Status
}

// key is a credential of the sequence with its latest material.
type key struct {
	id, raw   string
	creator   string // cast name or "subject N"; "" once a principal owns it
	principal string
	removed   bool // its creator was removed from A after it was created
}

type principal struct {
	id     string
	scopes []string
}

type seq struct {
	pw       *propWorld
	t        *testing.T
	rt       *rapid.T
	subjects []*subject
	keys     []*key
	sps      []*principal
	last     string // the actor of the step just played
	op       string // the operation being played
}

func (pw *propWorld) sequence(t *testing.T, rt *rapid.T) {
	pw.sequences.Add(1)
	pw.nextHour(t)
	s := &seq{pw: pw, t: t, rt: rt}
	for i := range 2 {
		s.subjects = append(s.subjects, pw.newSubject(t, i))
	}
	n := rapid.IntRange(20, 60).Draw(rt, "steps")
	ops := []string{"invite", "invite", "invite", "invitePartner", "accept", "accept", "accept", "session", "session", "suspend", "restore",
		"rename", "role", "remove", "login", "keyCreate", "keyCreate", "keyCreate", "keyCreate", "keyRotate", "keyRotate", "keyRotate",
		"keyRotate", "keyPatch", "keyPatch", "keyPatch", "keyRevoke", "spCreate", "spCreate", "spRotate", "spRotate", "spDisable",
		"spMigrate", "spMigrate", "spMigrate", "spKillRace", "removeRace", "ssoSignIn", "ssoSignIn", "ssoSignIn",
		"sgEdit", "sgEdit", "swEdit", "ruleEdit", "prompt", "prompt", "prompt", "prompt"}
	for i := range n {
		op := rapid.SampledFrom(ops).Draw(rt, fmt.Sprintf("op %d", i))
		s.play(op)
		pw.steps.Add(1)
		s.check()
		pw.checks.Add(1)
	}
}

// nextHour moves the clock an hour on (each sequence starts with fresh
// hourly invitation limits) and signs the cast in again.
func (pw *propWorld) nextHour(t *testing.T) {
	pw.Env.Clock.Advance(61 * time.Minute)
	px, py := pw.PX.ID, pw.PY.ID
	org := func(partner, orgID string) session.Claims {
		return session.Claims{Scope: authz.ScopeOrg, PartnerID: partner, OrgID: orgID, MFA: true}
	}
	for name, c := range map[string]session.Claims{
		fixture.AAdmin: org(px, pw.A.ID), fixture.ATech: org(px, pw.A.ID), fixture.AViewer: org(px, pw.A.ID),
		fixture.ARestricted: org(px, pw.A.ID), slice: org(px, pw.A.ID), fixture.BAdmin: org(px, pw.B.ID),
		fixture.CAdmin: org(py, pw.C.ID), fixture.PXAdmin: {Scope: authz.ScopePartner, PartnerID: px, MFA: true},
		fixture.PYAdmin: {Scope: authz.ScopePartner, PartnerID: py, MFA: true}, fixture.SysAdmin: {Scope: authz.ScopeSystem, MFA: true},
	} {
		pair, wr, err := pw.Env.Sessions.Start(pw.Users[name], c, "127.0.0.1", "sequence")
		must(t, err)
		must(t, pw.Env.Store.Commit(context.Background(), (&store.Tx{}).Add(wr)))
		pw.Tokens[name] = pair.AccessToken
	}
}

func (pw *propWorld) newSubject(t *testing.T, i int) *subject {
	now := "2026-11-01T09:00:00.000Z"
	u := &user.User{ID: uuid.NewString(), Email: fmt.Sprintf("subject%d-%s@example.com", i, uuid.NewString()[:10]), Name: ownName,
		Status: user.StatusActive, PasswordHash: pw.hash, LastLoginAt: now, CreatedAt: now, UpdatedAt: now}
	m := &user.Membership{ID: uuid.NewString(), UserID: u.ID, Scope: authz.ScopeOrg, PartnerID: pw.PY.ID, OrgID: pw.C.ID,
		RoleID: role.OrgViewerID, RoleOwner: role.SystemOwner, Status: user.MemberActive, CreatedAt: now}
	tx := (&store.Tx{}).Add(user.CreateWrites(u)...).Add(user.AddMembershipWrite(m), tenant.CountOrg(pw.C.ID, "", tenant.CountMembers, 1))
	must(t, pw.Env.Store.Commit(context.Background(), tx))
	return &subject{id: u.ID, email: u.Email, name: ownName, status: user.StatusActive}
}

// call serves one request with token ("" none) from a fresh source address.
func (s *seq) call(method, path, token string, body any) fixture.Response {
	ip := s.pw.ip.Add(1)
	res := fixture.Do(viaRapid{s.t, s.rt}, s.pw.API, fixture.Request{Method: method, Path: path, Token: token, Body: body,
		RemoteAddr: fmt.Sprintf("10.%d.%d.%d:1", ip/65536%256, ip/256%256, ip%256)})
	if ok(res) && s.op != "" {
		s.pw.answered[s.op]++
	}
	return res
}

// viaRapid reports the checks fixture.Do makes (contract, call budget) to
// rapid, so a sequence that breaks one is shrunk and printed like one that
// breaks an invariant, with the seed that replays it.
type viaRapid struct {
	testing.TB
	rt *rapid.T
}

func (v viaRapid) Errorf(format string, args ...any) { v.rt.Fatalf(format, args...) }

// SizesDrawn: the sequences draw names and scope lists of any size the API
// takes (fixture.DrawnSizes).
func (viaRapid) SizesDrawn() bool                    { return true }
func (v viaRapid) Fatalf(format string, args ...any) { v.rt.Fatalf(format, args...) }
func (v viaRapid) Error(args ...any)                 { v.rt.Fatal(args...) }
func (v viaRapid) Fatal(args ...any)                 { v.rt.Fatal(args...) }

func (s *seq) logf(format string, args ...any) { s.rt.Logf(format, args...) }

func (s *seq) fail(format string, args ...any) { s.rt.Fatalf("invariant broken: "+format, args...) }

// caller draws who acts: a cast member, or a subject holding a session.
func (s *seq) caller(withSubjects bool) (name, token string) {
	// Every member of the cast, those who may act in A more often than the
	// others (so that sequences reach deep states), and the subjects holding
	// a session.
	names := append(slices.Clone(actors), fixture.AAdmin, fixture.AAdmin, fixture.PXAdmin, fixture.PXAdmin, fixture.SysAdmin, slice, slice)
	if withSubjects {
		for i, sb := range s.subjects {
			if sb.token != "" {
				names = append(names, fmt.Sprintf("subject %d", i), fmt.Sprintf("subject %d", i), fmt.Sprintf("subject %d", i))
			}
		}
	}
	name = rapid.SampledFrom(names).Draw(s.rt, "caller")
	s.last = name
	if strings.HasPrefix(name, "subject ") {
		var i int
		fmt.Sscanf(name, "subject %d", &i)
		return name, s.subjects[i].token
	}
	return name, s.pw.Tokens[name]
}

// permsOf is what caller name holds in A now (a subject: its role there, if
// its membership is active).
func (s *seq) permsOf(name string) authz.Set {
	if !strings.HasPrefix(name, "subject ") {
		return s.pw.perms[name]
	}
	var i int
	fmt.Sscanf(name, "subject %d", &i)
	st, m, u := s.membership(s.subjects[i].id)
	if st != user.MemberActive || u.Status != user.StatusActive {
		return authz.Set{}
	}
	return roleSet(m.RoleID)
}

func (s *seq) subject() (int, *subject) {
	i := rapid.IntRange(0, len(s.subjects)-1).Draw(s.rt, "subject")
	return i, s.subjects[i]
}

func (s *seq) membership(id string) (user.MemberStatus, *user.Membership, *user.User) {
	ctx := context.Background()
	u, err := s.pw.Env.Users.Get(ctx, id)
	if err != nil {
		s.rt.Fatalf("profile: %v", err)
	}
	k := user.MembershipKey(id, authz.ScopeOrg, "", s.pw.A.ID)
	var m user.Membership
	switch err := s.pw.Env.Store.Get(ctx, k.PK, k.SK, &m); {
	case errors.Is(err, store.ErrNotFound):
		return user.MemberRemoved, nil, u
	case err != nil:
		s.rt.Fatalf("membership: %v", err)
	}
	return m.State(u), &m, u
}

func ok(res fixture.Response) bool { return res.Status >= 200 && res.Status < 300 }

// within reports whether every permission of acting is held in held.
func within(acting, held authz.Set) bool {
	for p := range acting {
		if !held.Has(p) {
			return false
		}
	}
	return true
}

func (s *seq) pickKey() *key {
	if len(s.keys) == 0 {
		return nil
	}
	return s.keys[rapid.IntRange(0, len(s.keys)-1).Draw(s.rt, "key")]
}

func (s *seq) pickSP() *principal {
	if len(s.sps) == 0 {
		return nil
	}
	return s.sps[rapid.IntRange(0, len(s.sps)-1).Draw(s.rt, "principal")]
}

var scopeChoices = [][]string{{"devices:read"}, {"*"}, {"devices:read", "organizations:write"}, {"users:read"}, {}}

func (s *seq) play(op string) {
	s.op = op
	defer func() { s.op = "" }()
	a := s.pw.A.ID
	switch op {
	case "invite":
		name, tok := s.caller(false)
		_, sb := s.subject()
		r := rapid.SampledFrom([]string{role.OrgAdminID, role.OrgTechnicianID, role.OrgViewerID}).Draw(s.rt, "role")
		res := s.call(http.MethodPost, "/api/v1/users/invite", tok, map[string]any{"orgId": a, "email": sb.email, "name": "Given Name", "roleId": r})
		s.logf("%s invites %s as %s: %d", name, sb.email, r, res.Status)
		if ok(res) {
			sb.accepted = false
		}
	case "invitePartner":
		_, sb := s.subject()
		s.last = fixture.PXAdmin
		res := s.call(http.MethodPost, "/api/v1/users/invite", s.pw.Tokens[fixture.PXAdmin], map[string]any{"email": sb.email,
			"name": "Partner Given", "roleId": role.PartnerAdminID, "orgAccess": "all"})
		s.logf("partner X admin invites %s into the partner: %d", sb.email, res.Status)
	case "accept":
		i, sb := s.subject()
		s.last = fmt.Sprintf("subject %d", i)
		st, m, _ := s.membership(sb.id)
		if m == nil {
			s.logf("subject %d accepts: no membership", i)
			return
		}
		tok, inv, err := user.NewInvite(m, "sequence", s.pw.Env.Clock.Now())
		must(s.t, err)
		must(s.t, s.pw.Env.Store.Do(context.Background(), store.Put(inv)))
		res := s.call(http.MethodPost, "/api/v1/auth/accept-invite", "", map[string]any{"token": tok, "password": subjPassword})
		s.logf("subject %d accepts (membership %s): %d", i, st, res.Status)
		if ok(res) {
			if st != user.MemberInvited {
				s.fail("an invitation in state %s was accepted", st)
			}
			sb.accepted = true
		}
	case "session":
		i, sb := s.subject()
		pair, wr, err := s.pw.Env.Sessions.Start(sb.id, session.Claims{Scope: authz.ScopeOrg, PartnerID: s.pw.PX.ID, OrgID: a, MFA: true}, "127.0.0.1", "sequence")
		must(s.t, err)
		must(s.t, s.pw.Env.Store.Commit(context.Background(), (&store.Tx{}).Add(wr)))
		sb.token = pair.AccessToken
		s.last = fmt.Sprintf("subject %d", i)
		s.logf("subject %d holds a session in A", i)
	case "suspend", "restore", "rename":
		name, tok := s.caller(false)
		i, sb := s.subject()
		body := map[string]any{"orgId": a, "status": "disabled"}
		switch op {
		case "restore":
			body["status"] = "active"
		case "rename":
			body = map[string]any{"orgId": a, "name": "Renamed By " + name}
		}
		res := s.call(http.MethodPatch, "/api/v1/users/"+sb.id, tok, body)
		s.logf("%s: %s subject %d: %d", name, op, i, res.Status)
		if ok(res) && name == fixture.SysAdmin {
			// System scope holds every account: its change is the account's.
			u, err := s.pw.Env.Users.Get(context.Background(), sb.id)
			must(s.t, err)
			sb.name, sb.status = u.Name, u.Status
		}
	case "role":
		name, tok := s.caller(false)
		i, sb := s.subject()
		r := rapid.SampledFrom([]string{role.OrgAdminID, role.OrgTechnicianID, role.OrgViewerID}).Draw(s.rt, "role")
		res := s.call(http.MethodPost, "/api/v1/users/"+sb.id+"/role", tok, map[string]any{"orgId": a, "roleId": r})
		s.logf("%s gives subject %d role %s: %d", name, i, r, res.Status)
	case "remove":
		name, tok := s.caller(false)
		i, sb := s.subject()
		res := s.call(http.MethodDelete, "/api/v1/users/"+sb.id+"?orgId="+a, tok, nil)
		s.logf("%s removes subject %d: %d", name, i, res.Status)
		if ok(res) {
			sb.accepted = false
			for _, k := range s.keys {
				if k.creator == fmt.Sprintf("subject %d", i) {
					k.removed = true
				}
			}
		}
	case "ssoSignIn":
		s.ssoSignIn()
	case "login":
		i, sb := s.subject()
		s.last = fmt.Sprintf("subject %d", i)
		res := s.call(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": sb.email, "password": subjPassword})
		s.logf("subject %d signs in: %d", i, res.Status)
		if ok(res) {
			var body struct {
				Tokens struct{ AccessToken string }
			}
			must(s.t, json.Unmarshal(res.Body, &body))
			c := claims(s.t, body.Tokens.AccessToken)
			if c.Scope == "partner" {
				s.fail("sign-in landed in a partner membership the account never accepted")
			}
			if c.OrgID == a {
				if st, _, _ := s.membership(sb.id); st != user.MemberActive || !sb.accepted {
					s.fail("sign-in landed in A's membership in state %s (accepted %v)", st, sb.accepted)
				}
			}
		}
	case "keyCreate":
		name, tok := s.caller(true)
		held := s.permsOf(name)
		scopes := rapid.SampledFrom(scopeChoices).Draw(s.rt, "scopes")
		res := s.call(http.MethodPost, "/api/v1/api-keys", tok, map[string]any{"orgId": a, "name": "seq", "scopes": scopes})
		s.logf("%s creates a key %v: %d", name, scopes, res.Status)
		if ok(res) {
			if !within(authz.Acting(scopes, nil), held) {
				s.fail("%s was issued a key with scopes %v beyond what it holds", name, scopes)
			}
			var k struct{ ID, Key string }
			res.Decode(s.t, &k)
			s.keys = append(s.keys, &key{id: k.ID, raw: k.Key, creator: name})
		}
	case "keyRotate", "keyPatch", "keyRevoke":
		k := s.pickKey()
		if k == nil {
			return
		}
		name, tok := s.caller(true)
		held := s.permsOf(name)
		before := s.storedKey(k)
		var res fixture.Response
		switch op {
		case "keyRotate":
			res = s.call(http.MethodPost, "/api/v1/api-keys/"+k.id+"/rotate", tok, nil)
			if ok(res) {
				acting := s.acting(k, before)
				if name != k.creator && !within(acting, held) {
					s.fail("%s rotated key %s acting with %v beyond what it holds", name, k.id, acting.List())
				}
				var r struct{ Key string }
				res.Decode(s.t, &r)
				k.raw = r.Key
			}
		case "keyPatch":
			scopes := rapid.SampledFrom(scopeChoices).Draw(s.rt, "scopes")
			res = s.call(http.MethodPatch, "/api/v1/api-keys/"+k.id, tok, map[string]any{"scopes": scopes})
			if ok(res) {
				if !within(authz.Acting(scopes, nil), held) {
					s.fail("%s widened key %s to %v beyond what it holds", name, k.id, scopes)
				}
				if k.principal != "" {
					for _, sp := range s.sps {
						if sp.id == k.principal && !within(authz.Acting(scopes, nil), authz.Acting(sp.scopes, nil)) {
							s.fail("principal key %s PATCHed to %v beyond its principal's %v", k.id, scopes, sp.scopes)
						}
					}
				}
			}
		case "keyRevoke":
			res = s.call(http.MethodDelete, "/api/v1/api-keys/"+k.id, tok, nil)
		}
		s.logf("%s: %s %s: %d", name, op, k.id, res.Status)
	case "spCreate":
		name, tok := s.caller(false)
		held := s.permsOf(name)
		scopes := rapid.SampledFrom(scopeChoices).Draw(s.rt, "scopes")
		res := s.call(http.MethodPost, "/api/v1/service-principals", tok, map[string]any{"orgId": a, "name": "bot", "scopes": scopes})
		s.logf("%s creates a principal %v: %d", name, scopes, res.Status)
		if ok(res) {
			if !within(authz.Acting(scopes, nil), held) {
				s.fail("%s created a principal with %v beyond what it holds", name, scopes)
			}
			var sp struct{ ID, APIKeyID, Key string }
			res.Decode(s.t, &sp)
			s.sps = append(s.sps, &principal{id: sp.ID, scopes: scopes})
			s.keys = append(s.keys, &key{id: sp.APIKeyID, raw: sp.Key, principal: sp.ID})
		}
	case "spRotate", "spDisable", "spMigrate":
		sp := s.pickSP()
		if sp == nil {
			return
		}
		name, tok := s.caller(false)
		held := s.permsOf(name)
		switch op {
		case "spRotate":
			res := s.call(http.MethodPost, "/api/v1/service-principals/"+sp.id+"/rotate", tok, nil)
			s.logf("%s rotates principal %s: %d", name, sp.id, res.Status)
			if ok(res) {
				if !within(authz.Acting(sp.scopes, nil), held) {
					s.fail("%s rotated principal %s with %v beyond what it holds", name, sp.id, sp.scopes)
				}
				var r struct{ APIKeyID, Key string }
				res.Decode(s.t, &r)
				s.keys = append(s.keys, &key{id: r.APIKeyID, raw: r.Key, principal: sp.id})
			}
		case "spDisable":
			res := s.call(http.MethodPost, "/api/v1/service-principals/"+sp.id+"/disable", tok, nil)
			s.logf("%s disables principal %s: %d", name, sp.id, res.Status)
		case "spMigrate":
			k := s.pickKey()
			if k == nil {
				return
			}
			before := s.storedKey(k)
			res := s.call(http.MethodPost, "/api/v1/service-principals/"+sp.id+"/migrate-key", tok, map[string]any{"keyId": k.id})
			s.logf("%s migrates key %s to principal %s: %d", name, k.id, sp.id, res.Status)
			if ok(res) {
				if before.PrincipalID != "" {
					s.fail("migrate-key moved key %s from principal %s", k.id, before.PrincipalID)
				}
				var got struct{ Scopes []string }
				res.Decode(s.t, &got)
				if !within(authz.Acting(got.Scopes, nil), held) {
					s.fail("%s migrated key %s with %v beyond what it holds", name, k.id, got.Scopes)
				}
				k.principal, k.creator = sp.id, ""
			}
		}
	default:
		if s.playRace(op) || s.playPAM(op) {
			return
		}
		s.rt.Fatalf("no op %s", op)
	}
}

func (s *seq) storedKey(k *key) *apikey.Key {
	got, err := apikey.Store{St: s.pw.Env.Store}.Key(context.Background(), s.pw.A.ID, k.id)
	must(s.t, err)
	return got
}

// acting is what key k (stored as before) acts with: its scopes bounded by
// its creator's permissions, or by its principal's scopes.
func (s *seq) acting(k *key, before *apikey.Key) authz.Set {
	if before.PrincipalID != "" {
		for _, sp := range s.sps {
			if sp.id == before.PrincipalID {
				return authz.Acting(before.Scopes, authz.Acting(sp.scopes, nil))
			}
		}
		return authz.Acting(before.Scopes, nil)
	}
	return authz.Acting(before.Scopes, s.permsOf(k.creator))
}

// check verifies the invariants after a step.
func (s *seq) check() {
	ctx := context.Background()
	for i, sb := range s.subjects {
		st, _, u := s.membership(sb.id)
		if (st == user.MemberActive || st == user.MemberSuspended) && !sb.accepted {
			s.fail("subject %d: membership of A is %s without the account's acceptance", i, st)
		}
		pk := user.MembershipKey(sb.id, authz.ScopePartner, s.pw.PX.ID, "")
		var pm user.Membership
		if err := s.pw.Env.Store.Get(ctx, pk.PK, pk.SK, &pm); err == nil && pm.Accepted(u) {
			s.fail("subject %d: the partner invitation, never accepted, is %s", i, pm.State(u))
		}
		if u.Name != sb.name || u.Status != sb.status {
			s.fail("subject %d: account-wide fields changed by %s without every membership: name %q status %s", i, s.last, u.Name, u.Status)
		}
		if st == user.MemberInvited || st == user.MemberInvitedSuspended {
			v := s.call(http.MethodGet, "/api/v1/users/"+sb.id+"?orgId="+s.pw.A.ID, s.pw.Tokens[fixture.PXAdmin], nil)
			if ok(v) {
				body := v.JSON(s.t)
				if body["name"] == ownName || body["lastLoginAt"] != nil {
					s.fail("subject %d: an unaccepted membership shows the account's own fields: %v", i, body)
				}
			}
		}
	}
	for _, k := range s.keys {
		stored := s.storedKey(k)
		if k.removed && stored.PrincipalID == "" && stored.Status != apikey.StatusRevoked {
			s.fail("key %s of a removed creator is %s", k.id, stored.Status)
		}
		res := fixture.Do(viaRapid{s.t, s.rt}, s.pw.API, fixture.Request{Method: http.MethodGet, Path: "/api/v1/devices", APIKey: k.raw, RemoteAddr: "192.0.2.99:1"})
		if res.Status != http.StatusOK {
			continue
		}
		if stored.Status != apikey.StatusActive {
			s.fail("key %s works while %s", k.id, stored.Status)
		}
		if !authz.Acting(stored.Scopes, nil).Has(authz.DevicesRead) {
			s.fail("key %s works without devices:read in its scopes %v", k.id, stored.Scopes)
		}
		if stored.PrincipalID != "" {
			sp, err := svcprincipal.Store{St: s.pw.Env.Store}.Principal(ctx, s.pw.A.ID, stored.PrincipalID)
			must(s.t, err)
			if sp.Status != svcprincipal.Active {
				s.fail("key %s of disabled principal %s works", k.id, sp.ID)
			}
			continue
		}
		if !s.permsOf(k.creator).Has(authz.DevicesRead) {
			s.fail("key %s works beyond its creator %s's current permissions", k.id, k.creator)
		}
	}
}

type tokenClaims struct {
	Scope     string `json:"scope"`
	OrgID     string `json:"orgId"`
	PartnerID string `json:"partnerId"`
	IdP       string `json:"idp"`
}

func claims(t *testing.T, tok string) tokenClaims {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("access token %q", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	must(t, err)
	var c tokenClaims
	must(t, json.Unmarshal(b, &c))
	return c
}
