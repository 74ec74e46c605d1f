package role_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// The role service against the emulator: tenancy, inheritance, immutability of
// the seeded roles, delete guards, name uniqueness and the audit trail.

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// world is the fixture's tenants (partner X owns organizations A and B,
// partner Y owns C) with the roles service.
type world struct {
	fixture.Tenants
	env *testenv.Env
	svc *role.Service
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := testenv.New(t)
	w := &world{Tenants: fixture.NewTenants(t, env), env: env}
	w.svc = &role.Service{St: env.Store, Roles: env.Roles, Users: env.Users, Orgs: tenant.Store{St: env.Store}}
	return w
}

// systemSet is the permission set of seeded role id.
func systemSet(id string) authz.Set {
	for _, r := range role.SystemRoles() {
		if r.ID == id {
			return authz.NewSet(r.PermissionList()...)
		}
	}
	panic("no system role " + id)
}

func as(p *authz.Principal) context.Context {
	if p.Kind == "" {
		p.Kind = authz.KindUser
	}
	if p.UserID == "" {
		p.UserID = uuid.NewString()
	}
	return authz.WithPrincipal(context.Background(), p)
}

// orgCaller holds seeded role roleID in org. Like a principal loaded from an
// organization membership, it carries no partner id.
func orgCaller(org tenant.Organization, roleID string) context.Context {
	return as(&authz.Principal{Scope: authz.ScopeOrg, OrgID: org.ID, RoleID: roleID, Perms: systemSet(roleID)})
}

func partnerCaller(p tenant.Partner, roleID string, access authz.OrgAccess, orgIDs ...string) context.Context {
	return as(&authz.Principal{Scope: authz.ScopePartner, PartnerID: p.ID, OrgAccess: access, OrgIDs: orgIDs,
		RoleID: roleID, Perms: systemSet(roleID)})
}

func sysCaller() context.Context {
	return as(&authz.Principal{Scope: authz.ScopeSystem, RoleID: role.SystemAdminID, Perms: systemSet(role.SystemAdminID)})
}

func ptr[T any](v T) *T { return &v }

// wantErr fails unless err carries want's kind and message.
func wantErr(t *testing.T, err error, want *fault.Error) *fault.Error {
	t.Helper()
	fe, ok := fault.As(err)
	if !ok || fe.Kind != want.Kind || fe.Message != want.Message {
		t.Fatalf("err = %v, want %q (kind %d)", err, want.Message, want.Kind)
	}
	return fe
}

// wantField fails unless err is a validation error naming path.
func wantField(t *testing.T, err error, path string) {
	t.Helper()
	fe := wantErr(t, err, fault.ErrValidation)
	fields, _ := fe.Details.(map[string]any)["fieldErrors"].(map[string][]string)
	if _, ok := fields[path]; !ok {
		t.Fatalf("validation error names %v, want %s", fields, path)
	}
}

func mustCreate(t *testing.T, svc *role.Service, ctx context.Context, in role.CreateInput) *role.View {
	t.Helper()
	v, err := svc.Create(ctx, in)
	if err != nil {
		t.Fatalf("create %q: %v", in.Name, err)
	}
	return v
}

func TestInheritanceGivesEffectivePermissionsWithSources(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := orgCaller(w.A, role.OrgAdminID)
	base := mustCreate(t, w.svc, ctx, role.CreateInput{Name: "Base", ParentRoleID: ptr(role.OrgViewerID),
		Permissions: []authz.Permission{authz.AlertsAck, authz.DevicesRead}})
	mid := mustCreate(t, w.svc, ctx, role.CreateInput{Name: "Mid", ParentRoleID: &base.ID,
		Permissions: []authz.Permission{authz.ScriptsExecute}})
	leaf := mustCreate(t, w.svc, ctx, role.CreateInput{Name: "Leaf", ParentRoleID: &mid.ID,
		Permissions: []authz.Permission{authz.DevicesExecute}})
	if leaf.Scope != authz.ScopeOrg || leaf.OrgID == nil || *leaf.OrgID != w.A.ID || leaf.PartnerID != nil || leaf.IsSystem {
		t.Fatalf("leaf owner: %+v", leaf.Role)
	}

	grants, err := w.svc.Effective(ctx, leaf.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range grants {
		got[g.Permission.String()] = fmt.Sprintf("%s/%v", g.SourceRoleName, g.Inherited)
	}
	want := map[string]string{
		"devices:execute":    "Leaf/false",
		"scripts:execute":    "Mid/true",
		"alerts:acknowledge": "Base/true",
		"devices:read":       "Base/true", // Base's own grant wins over Org Viewer's
		"scripts:read":       "Org Viewer/true",
		"alerts:read":        "Org Viewer/true",
		"sites:read":         "Org Viewer/true",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("effective grants\n got %v\nwant %v", got, want)
	}

	// Each parent counts its children.
	for id, n := range map[string]int{base.ID: 1, mid.ID: 1, leaf.ID: 0} {
		v, err := w.svc.Get(ctx, id)
		if err != nil || v.ChildCount != n {
			t.Fatalf("role %s childCount = %v (%v), want %d", id, v, err, n)
		}
	}

	// A user holding Leaf signs in with the whole chain's permissions.
	u := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: leaf.ID, RoleOwner: role.OrgOwner(w.A.ID)})
	claims, err := w.env.Sessions.Signer.Verify(u.Token)
	if err != nil {
		t.Fatal(err)
	}
	p, _, _, err := w.env.Auth.Load(context.Background(), claims)
	if err != nil {
		t.Fatal(err)
	}
	for _, perm := range []authz.Permission{authz.DevicesExecute, authz.ScriptsExecute, authz.AlertsAck, authz.SitesRead} {
		if !p.Perms.Has(perm) {
			t.Errorf("holder of Leaf lacks %s", perm)
		}
	}
	if p.Perms.Has(authz.DevicesWrite) {
		t.Error("holder of Leaf has devices:write, which no role of the chain grants")
	}
}

func TestCircularInheritanceIsRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := orgCaller(w.A, role.OrgAdminID)
	a := mustCreate(t, w.svc, ctx, role.CreateInput{Name: "A"})
	b := mustCreate(t, w.svc, ctx, role.CreateInput{Name: "B"})

	_, err := w.svc.Update(ctx, a.ID, role.UpdateInput{ParentRoleID: &a.ID})
	wantErr(t, err, role.ErrCircular)

	if _, err := w.svc.Update(ctx, b.ID, role.UpdateInput{ParentRoleID: &a.ID}); err != nil {
		t.Fatal(err)
	}
	_, err = w.svc.Update(ctx, a.ID, role.UpdateInput{ParentRoleID: &b.ID})
	wantErr(t, err, role.ErrCircular)

	c := mustCreate(t, w.svc, ctx, role.CreateInput{Name: "C", ParentRoleID: &b.ID})
	_, err = w.svc.Update(ctx, a.ID, role.UpdateInput{ParentRoleID: &c.ID})
	wantErr(t, err, role.ErrCircular)

	// Nothing changed: A still has no parent and B one child.
	got, err := w.svc.Get(ctx, a.ID)
	if err != nil || got.ParentRoleID != nil || got.ChildCount != 1 {
		t.Fatalf("A after refused cycles: %+v, %v", got, err)
	}
}

func TestInheritanceDepthIsBounded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := orgCaller(w.A, role.OrgAdminID)
	var parent *string
	for i := 1; i <= role.MaxDepth; i++ {
		v := mustCreate(t, w.svc, ctx, role.CreateInput{Name: fmt.Sprintf("L%d", i), ParentRoleID: parent})
		parent = &v.ID
	}
	_, err := w.svc.Create(ctx, role.CreateInput{Name: "Too deep", ParentRoleID: parent})
	wantErr(t, err, role.ErrTooDeep)
}

func TestSystemRolesAreImmutable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	org := orgCaller(w.A, role.OrgAdminID)
	partner := partnerCaller(w.PX, role.PartnerAdminID, authz.OrgAccessAll)

	_, err := w.svc.Update(org, role.OrgAdminID, role.UpdateInput{Name: ptr("Mine now")})
	wantErr(t, err, role.ErrModifySystem)
	_, err = w.svc.Update(partner, role.PartnerAdminID, role.UpdateInput{Permissions: &[]authz.Permission{}})
	wantErr(t, err, role.ErrModifySystem)
	err = w.svc.Delete(org, role.OrgViewerID)
	wantErr(t, err, role.ErrDeleteSystem)
	err = w.svc.Delete(partner, role.PartnerViewerID)
	wantErr(t, err, role.ErrDeleteSystem)
	// A system role of another scope is not visible to an organization caller.
	_, err = w.svc.Update(org, role.PartnerAdminID, role.UpdateInput{Name: ptr("x")})
	wantErr(t, err, role.ErrNotFound)

	stored, err := w.env.Roles.Get(context.Background(), role.SystemOwner, role.OrgAdminID)
	if err != nil || stored.Name != "Org Admin" || !stored.IsSystem {
		t.Fatalf("seeded role changed: %+v, %v", stored, err)
	}

	// Clone instead: a custom role of the caller's organization with the same permissions.
	clone, err := w.svc.Clone(org, role.OrgAdminID, "Org Admin (copy)")
	if err != nil {
		t.Fatal(err)
	}
	if clone.IsSystem || clone.OrgID == nil || *clone.OrgID != w.A.ID || clone.ParentRoleID != nil {
		t.Fatalf("clone: %+v", clone.Role)
	}
	if !authz.NewSet(clone.Permissions...).Has(authz.AuditExport) || len(clone.Permissions) != len(systemSet(role.OrgAdminID)) {
		t.Fatalf("clone permissions %v, want Org Admin's", clone.Permissions)
	}
	if _, err := w.svc.Update(org, clone.ID, role.UpdateInput{Description: ptr("ours")}); err != nil {
		t.Fatal(err)
	}
	// Cloning Partner Admin (*:*) needs a holder of *:*; the clone keeps Force MFA.
	pclone, err := w.svc.Clone(partner, role.PartnerAdminID, "Admins")
	if err != nil {
		t.Fatal(err)
	}
	if !pclone.ForceMFA || !slices.Contains(pclone.Permissions, authz.AdminAll) || pclone.PartnerID == nil || *pclone.PartnerID != w.PX.ID {
		t.Fatalf("partner clone: %+v %v", pclone.Role, pclone.Permissions)
	}
	_, err = w.svc.Clone(org, role.PartnerAdminID, "Stolen")
	wantErr(t, err, role.ErrNotFound)
}

func TestDeleteIsBlockedByHoldersAndChildren(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := orgCaller(w.A, role.OrgAdminID)
	parent := mustCreate(t, w.svc, ctx, role.CreateInput{Name: "Parent", Permissions: []authz.Permission{authz.DevicesRead}})
	child := mustCreate(t, w.svc, ctx, role.CreateInput{Name: "Child", ParentRoleID: &parent.ID})
	holder := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: parent.ID, RoleOwner: role.OrgOwner(w.A.ID)})

	blocked := func(users, children int) {
		t.Helper()
		fe := wantErr(t, w.svc.Delete(ctx, parent.ID), role.ErrInUse)
		want := map[string]any{"userCount": users, "childRoleCount": children}
		if fmt.Sprint(fe.Details) != fmt.Sprint(want) {
			t.Fatalf("details %v, want %v", fe.Details, want)
		}
	}
	blocked(1, 1)
	if err := w.svc.Delete(ctx, child.ID); err != nil {
		t.Fatal(err)
	}
	blocked(1, 0)
	k := user.MembershipKey(holder.UserID, authz.ScopeOrg, "", w.A.ID)
	if err := w.env.Store.Do(context.Background(), store.Delete(k.PK, k.SK)); err != nil {
		t.Fatal(err)
	}
	if err := w.svc.Delete(ctx, parent.ID); err != nil {
		t.Fatal(err)
	}
	_, err := w.svc.Get(ctx, parent.ID)
	wantErr(t, err, role.ErrNotFound)
	// The names are free again.
	mustCreate(t, w.svc, ctx, role.CreateInput{Name: "parent"})
	mustCreate(t, w.svc, ctx, role.CreateInput{Name: "Child"})
}

func TestRoleNamesAreUniquePerOwner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := orgCaller(w.A, role.OrgAdminID)
	mustCreate(t, w.svc, a, role.CreateInput{Name: "Ops"})
	_, err := w.svc.Create(a, role.CreateInput{Name: "  ops "})
	wantErr(t, err, role.ErrNameTaken)

	// Other owners have their own names.
	mustCreate(t, w.svc, orgCaller(w.B, role.OrgAdminID), role.CreateInput{Name: "Ops"})
	mustCreate(t, w.svc, partnerCaller(w.PX, role.PartnerAdminID, authz.OrgAccessAll), role.CreateInput{Name: "Ops"})

	dev := mustCreate(t, w.svc, a, role.CreateInput{Name: "Dev"})
	_, err = w.svc.Update(a, dev.ID, role.UpdateInput{Name: ptr("OPS")})
	wantErr(t, err, role.ErrNameTaken)
	if _, err := w.svc.Update(a, dev.ID, role.UpdateInput{Name: ptr("DEV")}); err != nil {
		t.Fatalf("case-only rename: %v", err)
	}
	_, err = w.svc.Create(a, role.CreateInput{Name: "dev"})
	wantErr(t, err, role.ErrNameTaken)
	if _, err := w.svc.Update(a, dev.ID, role.UpdateInput{Name: ptr("Tools")}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, w.svc, a, role.CreateInput{Name: "Dev"})

	// Racing creates of one name: one winner.
	const n = 12
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = w.svc.Create(a, role.CreateInput{Name: "Race"})
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		wantErr(t, err, role.ErrNameTaken)
	}
	if won != 1 {
		t.Fatalf("%d creates of one name succeeded, want 1", won)
	}
}

func TestTenancy(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := orgCaller(w.A, role.OrgAdminID)
	secret := mustCreate(t, w.svc, a, role.CreateInput{Name: "Secret", Permissions: []authz.Permission{authz.DevicesRead}})

	for name, ctx := range map[string]context.Context{
		"org B":         orgCaller(w.B, role.OrgAdminID),
		"other partner": partnerCaller(w.PY, role.PartnerAdminID, authz.OrgAccessAll),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := w.svc.Get(ctx, secret.ID)
			wantErr(t, err, role.ErrNotFound)
			_, err = w.svc.Effective(ctx, secret.ID)
			wantErr(t, err, role.ErrNotFound)
			_, err = w.svc.Update(ctx, secret.ID, role.UpdateInput{Name: ptr("Mine")})
			wantErr(t, err, role.ErrNotFound)
			wantErr(t, w.svc.Delete(ctx, secret.ID), role.ErrNotFound)
			_, err = w.svc.Clone(ctx, secret.ID, "Copy")
			wantErr(t, err, role.ErrNotFound)
			_, err = w.svc.Create(ctx, role.CreateInput{Name: "Child", ParentRoleID: &secret.ID})
			wantErr(t, err, role.ErrNotFound)
			_, err = w.svc.Create(ctx, role.CreateInput{OrgID: w.A.ID, Name: "Planted"})
			wantErr(t, err, role.ErrOrgNotFound)
			_, err = w.svc.List(ctx, w.A.ID)
			wantErr(t, err, role.ErrOrgNotFound)
		})
	}
	bList, err := w.svc.List(orgCaller(w.B, role.OrgAdminID), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range bList {
		if v.ID == secret.ID {
			t.Fatal("org B's list shows org A's role")
		}
	}
	// Org A's role is unchanged.
	if v, err := w.svc.Get(a, secret.ID); err != nil || v.Name != "Secret" {
		t.Fatalf("A's role after B's attempts: %+v, %v", v, err)
	}

	// Partner P1 (all organizations) and the system see it.
	for _, ctx := range []context.Context{partnerCaller(w.PX, role.PartnerAdminID, authz.OrgAccessAll), sysCaller()} {
		if _, err := w.svc.Get(ctx, secret.ID); err != nil {
			t.Fatal(err)
		}
	}

	// A role the caller can see but that belongs to another owner is no parent.
	partner := partnerCaller(w.PX, role.PartnerAdminID, authz.OrgAccessAll)
	prole := mustCreate(t, w.svc, partner, role.CreateInput{Name: "Partner role"})
	_, err = w.svc.Create(partner, role.CreateInput{OrgID: w.A.ID, Name: "Mixed", ParentRoleID: &prole.ID})
	wantField(t, err, "parentRoleId")
	_, err = w.svc.Create(partner, role.CreateInput{OrgID: w.A.ID, Name: "Mixed", ParentRoleID: ptr(role.PartnerViewerID)})
	wantField(t, err, "parentRoleId")
	_, err = w.svc.Create(a, role.CreateInput{Name: "Mixed", ParentRoleID: ptr(role.PartnerViewerID)})
	wantErr(t, err, role.ErrNotFound)
	_, err = w.svc.Create(a, role.CreateInput{Name: "Mixed", ParentRoleID: ptr(uuid.NewString())})
	wantErr(t, err, role.ErrNotFound)
}

func TestPartnerAccess(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secret := mustCreate(t, w.svc, orgCaller(w.A, role.OrgAdminID), role.CreateInput{Name: "In A"})

	for name, ctx := range map[string]context.Context{
		"selected": partnerCaller(w.PX, role.PartnerAdminID, authz.OrgAccessSelected, w.A.ID),
		"none":     partnerCaller(w.PX, role.PartnerAdminID, authz.OrgAccessNone),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := w.svc.Create(ctx, role.CreateInput{Name: "Nope"})
			wantErr(t, err, authz.ErrFullPartnerAccess)
			_, err = w.svc.Create(ctx, role.CreateInput{OrgID: w.A.ID, Name: "Nope"})
			wantErr(t, err, authz.ErrFullPartnerAccess)
			_, err = w.svc.List(ctx, w.A.ID)
			wantErr(t, err, authz.ErrFullPartnerAccess)
			_, err = w.svc.Get(ctx, secret.ID)
			wantErr(t, err, authz.ErrFullPartnerAccess)
			_, err = w.svc.Update(ctx, secret.ID, role.UpdateInput{Name: ptr("x")})
			wantErr(t, err, authz.ErrFullPartnerAccess)
			wantErr(t, w.svc.Delete(ctx, secret.ID), authz.ErrFullPartnerAccess)
			_, err = w.svc.Clone(ctx, secret.ID, "x")
			wantErr(t, err, authz.ErrFullPartnerAccess)
		})
	}

	all := partnerCaller(w.PX, role.PartnerAdminID, authz.OrgAccessAll)
	pr := mustCreate(t, w.svc, all, role.CreateInput{Name: "Partner ops"})
	if pr.Scope != authz.ScopePartner || pr.PartnerID == nil || *pr.PartnerID != w.PX.ID || pr.OrgID != nil {
		t.Fatalf("partner role owner: %+v", pr.Role)
	}
	or := mustCreate(t, w.svc, all, role.CreateInput{OrgID: w.A.ID, Name: "Org ops", ParentRoleID: ptr(role.OrgTechnicianID)})
	if or.Scope != authz.ScopeOrg || or.OrgID == nil || *or.OrgID != w.A.ID {
		t.Fatalf("org role owner: %+v", or.Role)
	}
	// Org A's admin sees the role the partner made for A.
	if _, err := w.svc.Get(orgCaller(w.A, role.OrgAdminID), or.ID); err != nil {
		t.Fatal(err)
	}
	_, err := w.svc.Create(all, role.CreateInput{OrgID: w.C.ID, Name: "Elsewhere"})
	wantErr(t, err, role.ErrOrgNotFound)
	_, err = w.svc.Create(all, role.CreateInput{OrgID: uuid.NewString(), Name: "Nowhere"})
	wantErr(t, err, role.ErrOrgNotFound)
	_, err = w.svc.Create(all, role.CreateInput{OrgID: "not-a-uuid", Name: "Bad"})
	wantField(t, err, "orgId")
}

func TestContextAndPermissions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sys := sysCaller()
	_, err := w.svc.Create(sys, role.CreateInput{Name: "Floating"})
	wantErr(t, err, authz.ErrContextRequired)
	_, err = w.svc.Clone(sys, role.OrgViewerID, "Floating")
	wantErr(t, err, authz.ErrContextRequired)
	v := mustCreate(t, w.svc, sys, role.CreateInput{OrgID: w.C.ID, Name: "By the system"})
	if v.OrgID == nil || *v.OrgID != w.C.ID {
		t.Fatalf("system-made role owner: %+v", v.Role)
	}

	noOrg := as(&authz.Principal{Scope: authz.ScopeOrg, Perms: systemSet(role.OrgAdminID)})
	_, err = w.svc.Create(noOrg, role.CreateInput{Name: "x"})
	wantErr(t, err, authz.ErrContextRequired)
	noScope := as(&authz.Principal{Perms: authz.NewSet(authz.UsersWrite, authz.UsersRead)})
	_, err = w.svc.List(noScope, "")
	wantErr(t, err, authz.ErrContextRequired)

	_, err = w.svc.Create(orgCaller(w.A, role.OrgTechnicianID), role.CreateInput{Name: "x"})
	wantErr(t, err, authz.ErrForbidden)
	_, err = w.svc.List(orgCaller(w.A, role.OrgViewerID), "")
	wantErr(t, err, authz.ErrForbidden)
	wantErr(t, w.svc.Delete(partnerCaller(w.PX, role.PartnerTechnicianID, authz.OrgAccessAll), v.ID), authz.ErrForbidden)
	_, err = w.svc.Effective(context.Background(), v.ID)
	wantErr(t, err, authz.ErrUnauthenticated)

	key := as(&authz.Principal{Kind: authz.KindAPIKey, APIKeyID: "k", Scope: authz.ScopeOrg, OrgID: w.A.ID,
		KeyScopes: []string{"users:read"}, Perms: systemSet(role.OrgAdminID)})
	if _, err := w.svc.List(key, ""); err != nil {
		t.Fatal(err)
	}
	_, err = w.svc.Create(key, role.CreateInput{Name: "By key"})
	wantErr(t, err, authz.ErrKeyScope)
}

func TestValidation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := orgCaller(w.A, role.OrgAdminID)
	for _, c := range []struct {
		in   role.CreateInput
		path string
	}{
		{role.CreateInput{Name: "   "}, "name"},
		{role.CreateInput{Name: strings.Repeat("n", role.MaxName+1)}, "name"},
		{role.CreateInput{Name: "x", Description: strings.Repeat("d", role.MaxDescription+1)}, "description"},
		{role.CreateInput{Name: "x", Permissions: []authz.Permission{authz.DevicesRead, {Resource: "devices", Action: "fly"}}}, "permissions.1"},
		{role.CreateInput{Name: "x", Permissions: []authz.Permission{{Resource: "devices", Action: "*"}}}, "permissions.0"},
		{role.CreateInput{Name: "x", ParentRoleID: ptr("nope")}, "parentRoleId"},
	} {
		_, err := w.svc.Create(a, c.in)
		wantField(t, err, c.path)
	}
	mustCreate(t, w.svc, a, role.CreateInput{Name: strings.Repeat("n", role.MaxName)})

	// *:* only from a holder of *:*, directly or through a parent.
	_, err := w.svc.Create(a, role.CreateInput{Name: "God", Permissions: []authz.Permission{authz.AdminAll}})
	wantErr(t, err, role.ErrWildcard)
	padmin := partnerCaller(w.PX, role.PartnerAdminID, authz.OrgAccessAll)
	god := mustCreate(t, w.svc, padmin, role.CreateInput{Name: "God", Permissions: []authz.Permission{authz.AdminAll}})
	puser := as(&authz.Principal{Scope: authz.ScopePartner, PartnerID: w.PX.ID, OrgAccess: authz.OrgAccessAll,
		Perms: authz.NewSet(authz.UsersRead, authz.UsersWrite)})
	_, err = w.svc.Create(puser, role.CreateInput{Name: "Heir", ParentRoleID: ptr(role.PartnerAdminID)})
	wantErr(t, err, role.ErrWildcard)
	_, err = w.svc.Create(puser, role.CreateInput{Name: "Heir", ParentRoleID: &god.ID})
	wantErr(t, err, role.ErrWildcard)
	heir := mustCreate(t, w.svc, puser, role.CreateInput{Name: "Heir"})
	_, err = w.svc.Update(puser, heir.ID, role.UpdateInput{ParentRoleID: &god.ID})
	wantErr(t, err, role.ErrWildcard)
	_, err = w.svc.Update(puser, heir.ID, role.UpdateInput{Permissions: &[]authz.Permission{authz.AdminAll}})
	wantErr(t, err, role.ErrWildcard)
	_, err = w.svc.Clone(puser, god.ID, "Copy of God")
	wantErr(t, err, role.ErrWildcard)

	// Ceiling: users:write cannot mint permissions its holder lacks.
	_, err = w.svc.Create(puser, role.CreateInput{Name: "Biller", Permissions: []authz.Permission{authz.BillingManage}})
	wantErr(t, err, role.ErrCeiling)
	_, err = w.svc.Update(puser, heir.ID, role.UpdateInput{Permissions: &[]authz.Permission{authz.UsersRead, authz.DevicesDelete}})
	wantErr(t, err, role.ErrCeiling)
	_, err = w.svc.Clone(puser, role.PartnerViewerID, "Viewer copy")
	wantErr(t, err, role.ErrCeiling)
	mustCreate(t, w.svc, puser, role.CreateInput{Name: "Reader", Permissions: []authz.Permission{authz.UsersRead}})
	// Nor through a parent: inherited permissions count against the ceiling too.
	_, err = w.svc.Create(puser, role.CreateInput{Name: "Tech heir", ParentRoleID: ptr(role.PartnerTechnicianID)})
	wantErr(t, err, role.ErrCeiling)
	_, err = w.svc.Update(puser, heir.ID, role.UpdateInput{ParentRoleID: ptr(role.PartnerTechnicianID)})
	wantErr(t, err, role.ErrCeiling)
	tech := mustCreate(t, w.svc, padmin, role.CreateInput{Name: "Tech", Permissions: []authz.Permission{authz.DevicesExecute}})
	_, err = w.svc.Create(puser, role.CreateInput{Name: "Tech child", ParentRoleID: &tech.ID})
	wantErr(t, err, role.ErrCeiling)
	mustCreate(t, w.svc, puser, role.CreateInput{Name: "Reader child", ParentRoleID: ptr(mustCreate(t, w.svc, puser,
		role.CreateInput{Name: "Reader parent", Permissions: []authz.Permission{authz.UsersRead}}).ID)})

	_, err = w.svc.Update(a, role.OrgViewerID, role.UpdateInput{})
	wantErr(t, err, role.ErrModifySystem)
	mine := mustCreate(t, w.svc, a, role.CreateInput{Name: "Mine"})
	_, err = w.svc.Update(a, mine.ID, role.UpdateInput{})
	wantErr(t, err, role.ErrNoUpdates)
	_, err = w.svc.Update(a, mine.ID, role.UpdateInput{Permissions: &[]authz.Permission{{Resource: "x", Action: "y"}}})
	wantField(t, err, "permissions.0")
	_, err = w.svc.Get(a, "not-a-uuid")
	wantField(t, err, "id")
}

func TestUpdateChangesFieldsAndParents(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := orgCaller(w.A, role.OrgAdminID)
	p1 := mustCreate(t, w.svc, a, role.CreateInput{Name: "P1"})
	p2 := mustCreate(t, w.svc, a, role.CreateInput{Name: "P2"})
	r := mustCreate(t, w.svc, a, role.CreateInput{Name: "R", ParentRoleID: &p1.ID})

	v, err := w.svc.Update(a, r.ID, role.UpdateInput{Name: ptr("R2"), Description: ptr("d"),
		Permissions: &[]authz.Permission{authz.SitesRead, authz.SitesRead, authz.TopologyRead}, ParentRoleID: &p2.ID})
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != "R2" || v.Description != "d" || *v.ParentRoleID != p2.ID || len(v.Permissions) != 2 {
		t.Fatalf("updated: %+v %v", v.Role, v.Permissions)
	}
	counts := func(want1, want2 int) {
		t.Helper()
		for id, n := range map[string]int{p1.ID: want1, p2.ID: want2} {
			got, err := w.svc.Get(a, id)
			if err != nil || got.ChildCount != n {
				t.Fatalf("childCount of %s = %+v, %v; want %d", id, got, err, n)
			}
		}
	}
	counts(0, 1)
	if err := w.svc.Delete(a, p1.ID); err != nil {
		t.Fatalf("P1 has no child any more: %v", err)
	}
	// To a system parent, then none.
	if _, err := w.svc.Update(a, r.ID, role.UpdateInput{ParentRoleID: ptr(role.OrgViewerID)}); err != nil {
		t.Fatal(err)
	}
	grants, err := w.svc.Effective(a, r.ID)
	if err != nil || len(grants) != 2+3 {
		t.Fatalf("effective after system parent: %v, %v", grants, err)
	}
	if _, err := w.svc.Update(a, r.ID, role.UpdateInput{ParentRoleID: ptr("")}); err != nil {
		t.Fatal(err)
	}
	got, err := w.svc.Get(a, r.ID)
	if err != nil || got.ParentRoleID != nil {
		t.Fatalf("after removing the parent: %+v, %v", got, err)
	}
	counts2, err := w.svc.Get(a, p2.ID)
	if err != nil || counts2.ChildCount != 0 {
		t.Fatalf("P2 childCount: %+v, %v", counts2, err)
	}
}

// Two requests re-parenting A under B and B under A at once must not both win
// (which would store a cycle): the chain's versions are checked in the transaction.
func TestConcurrentReparentCannotCloseACycle(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := orgCaller(w.A, role.OrgAdminID)
	a := mustCreate(t, w.svc, ctx, role.CreateInput{Name: "A"})
	b := mustCreate(t, w.svc, ctx, role.CreateInput{Name: "B"})
	for round := range 6 {
		var wg sync.WaitGroup
		var errA, errB error
		wg.Add(2)
		go func() { defer wg.Done(); _, errA = w.svc.Update(ctx, a.ID, role.UpdateInput{ParentRoleID: &b.ID}) }()
		go func() { defer wg.Done(); _, errB = w.svc.Update(ctx, b.ID, role.UpdateInput{ParentRoleID: &a.ID}) }()
		wg.Wait()
		if errA == nil && errB == nil {
			t.Fatalf("round %d: both re-parents succeeded: a cycle is stored", round)
		}
		for _, err := range []error{errA, errB} {
			if err == nil {
				continue
			}
			fe, ok := fault.As(err)
			if !ok || (fe.Message != role.ErrCircular.Message && fe.Message != role.ErrChanged.Message) {
				t.Fatalf("round %d: loser got %v", round, err)
			}
		}
		for _, id := range []string{a.ID, b.ID} {
			if _, err := w.svc.Effective(ctx, id); err != nil {
				t.Fatalf("round %d: effective of %s: %v", round, id, err)
			}
			if _, err := w.svc.Update(ctx, id, role.UpdateInput{ParentRoleID: ptr("")}); err != nil {
				t.Fatalf("round %d: reset %s: %v", round, id, err)
			}
		}
	}
}

func TestListWithUserCounts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := orgCaller(w.A, role.OrgAdminID)
	zeta := mustCreate(t, w.svc, a, role.CreateInput{Name: "zeta"})
	alpha := mustCreate(t, w.svc, a, role.CreateInput{Name: "Alpha"})
	fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgAdminID})
	fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgAdminID})
	fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: alpha.ID, RoleOwner: role.OrgOwner(w.A.ID)})
	fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.B.ID, RoleID: role.OrgAdminID}) // another org

	ctx, calls := store.WithCalls(a)
	list, err := w.svc.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if calls.N() > 3 {
		t.Errorf("List made %d DynamoDB calls, budget 3", calls.N())
	}
	var got []string
	for _, v := range list {
		got = append(got, fmt.Sprintf("%s=%d", v.Name, v.UserCount))
	}
	want := []string{"Org Admin=2", "Org Technician=0", "Org Viewer=0", "Alpha=1", "zeta=0"}
	if !slices.Equal(got, want) {
		t.Fatalf("list %v, want %v", got, want)
	}
	if list[4].ID != zeta.ID {
		t.Fatalf("last role %s, want zeta", list[4].ID)
	}
	if v, err := w.svc.Get(a, role.OrgAdminID); err != nil || v.UserCount != 2 {
		t.Fatalf("Org Admin in A: %+v, %v", v, err)
	}
	if v, err := w.svc.Get(a, alpha.ID); err != nil || v.UserCount != 1 {
		t.Fatalf("Alpha: %+v, %v", v, err)
	}

	partner := partnerCaller(w.PX, role.PartnerAdminID, authz.OrgAccessAll)
	mustCreate(t, w.svc, partner, role.CreateInput{Name: "Partner custom"})
	plist, err := w.svc.List(partner, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range plist {
		names = append(names, v.Name)
	}
	if !slices.Equal(names, []string{"Partner Admin", "Partner Technician", "Partner Viewer", "Partner custom"}) {
		t.Fatalf("partner list %v", names)
	}
	olist, err := w.svc.List(partner, w.A.ID)
	if err != nil || len(olist) != 5 {
		t.Fatalf("partner's list of A: %d roles, %v", len(olist), err)
	}
}

func TestChangesAreAudited(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := &authz.Principal{Scope: authz.ScopeOrg, OrgID: w.A.ID, Perms: systemSet(role.OrgAdminID), Email: "admin@example.com"}
	ctx := as(p)
	tick := func() { w.env.Clock.Advance(time.Second) } // records sort by time
	r := mustCreate(t, w.svc, ctx, role.CreateInput{Name: "Audited"})
	tick()
	if _, err := w.svc.Update(ctx, r.ID, role.UpdateInput{Name: ptr("Audited 2")}); err != nil {
		t.Fatal(err)
	}
	tick()
	c, err := w.svc.Clone(ctx, r.ID, "Audited copy")
	if err != nil {
		t.Fatal(err)
	}
	tick()
	if err := w.svc.Delete(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	tick()
	// A refused change leaves no record.
	_, err = w.svc.Create(ctx, role.CreateInput{Name: "Audited copy"})
	wantErr(t, err, role.ErrNameTaken)

	recs, err := audit.List(context.Background(), w.env.Store, audit.Tenant(w.A.ID, ""), 50)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range recs {
		if rec.Actor.ID != p.UserID || rec.ResourceType != "role" {
			t.Errorf("record %+v: wrong actor or resource", rec)
		}
		got = append(got, rec.Action+":"+rec.ResourceID)
	}
	slices.Reverse(got)
	want := []string{"role.create:" + r.ID, "role.update:" + r.ID, "role.clone:" + c.ID, "role.delete:" + r.ID}
	if !slices.Equal(got, want) {
		t.Fatalf("audit %v, want %v", got, want)
	}

	pr := mustCreate(t, w.svc, partnerCaller(w.PX, role.PartnerAdminID, authz.OrgAccessAll), role.CreateInput{Name: "P"})
	precs, err := audit.List(context.Background(), w.env.Store, audit.Tenant("", w.PX.ID), 10)
	if err != nil || len(precs) != 1 || precs[0].Action != "role.create" || precs[0].ResourceID != pr.ID {
		t.Fatalf("partner audit: %+v, %v", precs, err)
	}
}

func TestCallBudgets(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := as(&authz.Principal{Scope: authz.ScopeOrg, OrgID: w.A.ID, PartnerID: w.PX.ID, Perms: systemSet(role.OrgAdminID)})
	for _, c := range []struct {
		name   string
		budget int
		run    func(ctx context.Context) error
	}{
		{"create", 1, func(ctx context.Context) error {
			_, err := w.svc.Create(ctx, role.CreateInput{Name: "Budget"})
			return err
		}},
		{"create with parent", 2, func(ctx context.Context) error {
			_, err := w.svc.Create(ctx, role.CreateInput{Name: "Budget child", ParentRoleID: ptr(role.OrgViewerID)})
			return err
		}},
		{"get system role", 2, func(ctx context.Context) error { _, err := w.svc.Get(ctx, role.OrgViewerID); return err }},
		{"effective", 3, func(ctx context.Context) error { _, err := w.svc.Effective(ctx, role.OrgViewerID); return err }},
	} {
		ctx, calls := store.WithCalls(a)
		if err := c.run(ctx); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if calls.N() > c.budget {
			t.Errorf("%s made %d DynamoDB calls, budget %d", c.name, calls.N(), c.budget)
		}
	}
	if !errors.Is(role.ErrNotFound, fault.ErrNotFound) {
		t.Error("role.ErrNotFound is not a not-found fault")
	}
}
