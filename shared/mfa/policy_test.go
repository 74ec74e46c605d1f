package mfa_test

import (
	"slices"
	"testing"

	"github.com/gale-rmm/gale/shared/app/authgroup"
	"github.com/gale-rmm/gale/shared/app/authpasskeysgroup"
	"github.com/gale-rmm/gale/shared/mfa"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

// The organization MFA policy is read by one function that shared/mfa and
// shared/passkey share: every organization membership of the user counts,
// strictest wins, and partner memberships carry no policy.
func TestOneMFAPolicyForMFAAndPasskeys(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	svc, err := authgroup.MFA(w.Env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := authpasskeysgroup.Passkeys(w.Env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	pol := mfa.OrgPolicy{Users: w.Env.Deps.Users, Orgs: tenant.Store{St: w.Env.Deps.Store}}
	if any(svc.Policy) != any(pol) || any(pk.Policy) != any(pol) {
		t.Fatalf("mfa reads the policy with %#v, passkey with %#v: want the one app.MFAPolicy reader", svc.Policy, pk.Policy)
	}
	check := func(uid string, wantRequire bool, wantAllowed ...string) {
		t.Helper()
		require, allowed, err := pol.UserMFAPolicy(t.Context(), uid)
		if err != nil || require != wantRequire || !slices.Equal(allowed, wantAllowed) {
			t.Fatalf("policy of %s = %v %v %v, want %v %v", uid, require, allowed, err, wantRequire, wantAllowed)
		}
	}
	check(w.c.UserID, false, "totp", "sms", "passkey")
	w.setPolicy(t, false, "totp", "sms", "passkey")
	check(w.c.UserID, false, "totp", "sms", "passkey")

	// A second organization of the same user: its stricter settings bind the account.
	p := fixture.Partner(t, w.Env, "P2")
	other := fixture.Org(t, w.Env, p.ID, "Other")
	m := &user.Membership{ID: uuid.NewString(), UserID: w.c.UserID, Scope: authz.ScopeOrg, OrgID: other.ID,
		RoleID: role.OrgViewerID, RoleOwner: role.SystemOwner, CreatedAt: "2026-11-01T09:00:00.000Z"}
	if err := w.Env.Store.Do(t.Context(), user.AddMembershipWrite(m)); err != nil {
		t.Fatal(err)
	}
	sec := tenant.DefaultSecurity(other.ID)
	sec.RequireMFA, sec.AllowedMFAMethods = true, []string{"sms", "passkey"}
	if err := w.Env.Store.Do(t.Context(), store.Put(sec)); err != nil {
		t.Fatal(err)
	}
	check(w.c.UserID, true, "sms", "passkey")
	w.setPolicy(t, false, "totp", "passkey")
	check(w.c.UserID, true, "passkey")

	// Partner staff are under no organization's policy.
	staff := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopePartner, PartnerID: p.ID, RoleID: role.PartnerViewerID,
		OrgAccess: authz.OrgAccessAll})
	check(staff.UserID, false, "totp", "sms", "passkey")
}
