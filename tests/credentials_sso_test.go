package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/oauth2-proxy/mockoidc"
	"pgregory.net/rapid"

	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

// SSO sign-ins in the credential sequences (ATTACKS 14,
// docs/decisions.md#identity-federation): each tenant's provider asserts any
// account's e-mail, verified or not, and the sequence checks that a provider
// signs in only an account holding an active, accepted membership it serves
// (the third case, a credentialless invitee, cannot arise here: every account
// of the pool has a password), that its session lands in that tenant bound to
// the provider, and that the session changes nothing account-wide.

// ssoProvider is one tenant's provider: the organization (or partner) it
// serves and the cast members whose membership it serves.
type ssoProvider struct {
	name   string
	idp    *fixture.IdP
	tenant string // its login id: the organization's or the partner's
	orgA   bool   // it serves organization A (the subjects' memberships there)
	orgC   bool   // it serves organization C (every subject holds a membership there)
	cast   map[string]bool
}

type ssoWorld struct {
	pki       *fixture.PKI
	providers []*ssoProvider
	emails    map[string]string // cast member -> e-mail
	selfReg   string            // a self-registered account with a password and no membership
}

// ssoSetup registers and activates, with autoProvision on, the providers of
// organization A (by its admin), of organization C of partner Y (by its
// admin) and of partner X (by its admin), and records the cast's e-mails.
func (pw *propWorld) ssoSetup(t *testing.T, pki *fixture.PKI) *ssoWorld {
	sw := &ssoWorld{pki: pki, emails: map[string]string{}}
	for _, p := range []struct {
		name, admin, tenant, role string
		orgA, orgC                bool
		cast                      []string
	}{
		{"provider of A", fixture.AAdmin, pw.A.ID, role.OrgViewerID, true, false,
			[]string{fixture.AAdmin, fixture.ATech, fixture.AViewer, fixture.ARestricted, fixture.AGroupOnly, fixture.ANoMFA, slice}},
		{"provider of C", fixture.CAdmin, pw.C.ID, role.OrgViewerID, false, true, []string{fixture.CAdmin}},
		{"provider of partner X", fixture.PXAdmin, pw.PX.ID, role.PartnerViewerID, false, false, []string{fixture.PXAdmin, fixture.PXSelectedB}},
	} {
		idp := fixture.NewIdP(t, pki)
		body := map[string]any{"name": p.name, "issuer": idp.Issuer(), "clientId": idp.ClientID, "clientSecret": idp.ClientSecret,
			"autoProvision": true, "defaultRoleId": p.role}
		if p.tenant != pw.PX.ID {
			body["orgId"] = p.tenant
		}
		pr := fixture.Expect(t, pw.Call(t, http.MethodPost, "/api/v1/sso/providers", p.admin, body), http.StatusCreated).JSON(t)
		fixture.Expect(t, pw.Call(t, http.MethodPost, "/api/v1/sso/providers/"+pr["id"].(string)+"/status", p.admin,
			map[string]any{"status": "active"}), http.StatusOK)
		cast := map[string]bool{}
		for _, c := range p.cast {
			cast[c] = true
		}
		sw.providers = append(sw.providers, &ssoProvider{name: p.name, idp: idp, tenant: p.tenant, orgA: p.orgA, orgC: p.orgC, cast: cast})
	}
	for name, id := range pw.Users {
		u, err := pw.Env.Users.Get(context.Background(), id)
		must(t, err)
		sw.emails[name] = u.Email
	}
	now := "2026-11-01T09:00:00.000Z"
	u := &user.User{ID: uuid.NewString(), Email: "self-" + uuid.NewString()[:10] + "@example.com", Name: ownName,
		Status: user.StatusActive, PasswordHash: pw.hash, CreatedAt: now, UpdatedAt: now}
	must(t, pw.Env.Store.Commit(context.Background(), (&store.Tx{}).Add(user.CreateWrites(u)...)))
	sw.selfReg = u.Email
	return sw
}

// ssoSignIn: a provider asserts an account's e-mail (a subject, a cast member,
// the self-registered account or a new address), verified or not.
func (s *seq) ssoSignIn() {
	sw := s.pw.sso
	p := rapid.SampledFrom(sw.providers).Draw(s.rt, "provider")
	kinds := []string{"subject", "subject", "cast", "self-registered", "new"}
	kind := rapid.SampledFrom(kinds).Draw(s.rt, "account")
	verified := rapid.Float64Range(0, 1).Draw(s.rt, "verified") < 0.8
	var email, who string
	served := false
	sb := -1
	switch kind {
	case "subject":
		i, sub := s.subject()
		sb, email, who = i, sub.email, fmt.Sprintf("subject %d", i)
		st, _, u := s.membership(sub.id)
		active := u.Status == user.StatusActive
		served = active && (p.orgC || (p.orgA && st == user.MemberActive && sub.accepted))
	case "cast":
		who = rapid.SampledFrom(append(actors, fixture.PXSelectedB, fixture.AGroupOnly, fixture.ANoMFA)).Draw(s.rt, "cast member")
		email, served = sw.emails[who], p.cast[who]
	case "self-registered":
		email, who = sw.selfReg, "the self-registered account"
	case "new":
		email, who = "new-"+uuid.NewString()[:12]+"@example.com", "a new address"
	}
	sum := sha256.Sum256([]byte(email))
	mu := &mockoidc.MockUser{Subject: "sub-" + hex.EncodeToString(sum[:8]), Email: email, EmailVerified: verified,
		PreferredUsername: email}
	p.idp.Sync(s.pw.Env.Clock.Now())
	ip := s.pw.ip.Add(1)
	b := fixture.NewBrowser(s.pw.API, sw.pki, fmt.Sprintf("10.%d.%d.%d:1", ip/65536%256, ip/256%256, ip%256))
	code, refused := b.SignIn(viaRapid{s.t, s.rt}, p.idp, p.tenant, mu)
	s.logf("%s asserts %s (%s, verified %v): code %v, error %q", p.name, who, email, verified, code != "", refused)
	if code == "" {
		return
	}
	if kind != "new" && !served {
		s.fail("%s signed in %s, whose account holds no active, accepted membership it serves", p.name, who)
	}
	res := s.call(http.MethodPost, "/api/v1/sso/exchange", "", map[string]any{"code": code})
	if !ok(res) {
		s.fail("exchange of a fresh code: %d %s", res.Status, res.Body)
	}
	var body struct {
		MFARequired bool
		Tokens      struct{ AccessToken string }
	}
	res.Decode(s.t, &body)
	if body.MFARequired {
		return // the second factor is the password sign-in's (shared/sso tests walk it)
	}
	c := claims(s.t, body.Tokens.AccessToken)
	if c.IdP == "" || (c.OrgID != p.tenant && c.PartnerID != p.tenant) {
		s.fail("%s's session for %s is not bound to its tenant: %+v", p.name, who, c)
	}
	// The session changes nothing account-wide (check() then finds the
	// subjects' names and statuses as they were).
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPatch, "/api/v1/users/me", map[string]any{"name": "Renamed By " + p.name}},
		{http.MethodPost, "/api/v1/auth/change-password", map[string]any{"currentPassword": subjPassword, "newPassword": "Brand-New-Pass-42"}},
	} {
		got := s.call(r.method, r.path, body.Tokens.AccessToken, r.body)
		if got.Status != http.StatusForbidden || got.JSON(s.t)["code"] != "credential_sign_in_required" {
			s.fail("%s's session for %s: %s %s answered %d %s", p.name, who, r.method, r.path, got.Status, got.Body)
		}
	}
	if sb >= 0 && p.orgA {
		// The subject acts on in A through its provider's session.
		s.subjects[sb].token = body.Tokens.AccessToken
	}
}
