package sso

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/outbound"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/secret"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
)

// Orgs reaches organizations; tenant.Store satisfies it.
type Orgs interface{ tenant.ListOrgs }

// Roles resolves a role with its effective permissions; role.Store satisfies it.
type Roles interface {
	Assignee(ctx context.Context, id string) (user.RoleInfo, error)
}

// Accounts is what single sign-on needs of shared/user's accounts and
// memberships (ssogroup wires user.Store and the package's write builders).
type Accounts interface {
	Get(ctx context.Context, id string) (*user.User, error)
	ByEmail(ctx context.Context, email string) (*user.User, error)
	Memberships(ctx context.Context, userID string) ([]user.Membership, error)
	// Grants reports whether m of account u grants its role (accepted by the
	// account and not suspended: the active state of shared/user's table).
	Grants(u *user.User, m *user.Membership) bool
	// Accepted reports whether account u accepted m (active or suspended).
	Accepted(u *user.User, m *user.Membership) bool
	// Pending reports whether m of account u is an invitation awaiting
	// acceptance.
	Pending(u *user.User, m *user.Membership) bool
	// AcceptWrites are the account's own acceptance of invitation m by its
	// SSO sign-in, for a credentialless account (status invited, no password):
	// m becomes active and the account active (no password is set); each
	// write is a compare-and-swap on the state read, and the invitation
	// token is spent.
	AcceptWrites(u *user.User, m *user.Membership) []*store.Write
	// AccountWrites create an active account u without a password (with its
	// e-mail guard: a taken e-mail fails the transaction).
	AccountWrites(u *user.User) []*store.Write
	// MembershipWrite creates membership m, accepted by the account's own SSO
	// sign-in (it grants its role at once).
	MembershipWrite(m *user.Membership) *store.Write
	// StillAccepted holds a transaction to m being accepted and not suspended.
	StillAccepted(m *user.Membership) *store.Write
}

// SignIn finishes a sign-in (signin.Service).
type SignIn interface {
	AfterFirstFactor(ctx context.Context, u *user.User, m *user.Membership, idp string, c signin.Client) (signin.Result, error)
}

// Service holds the rules of /sso.
type Service struct {
	St       Store
	Orgs     Orgs
	Roles    Roles
	Accounts Accounts
	SignIn   SignIn
	Limits   ratelimit.Limiter
	Clock    clock.Clock
	Box      *secret.Box
	// Guard checks issuers and every endpoint a discovery document names;
	// HTTP is its client (shared/outbound), used for every provider call.
	Guard *outbound.Guard
	HTTP  *http.Client
	// AppURL receives the final redirects; APIURL is where providers return
	// (<APIURL>/api/v1/sso/callback).
	AppURL, APIURL string
}

// Settings are a provider's settings in a create body.
type Settings struct {
	Name             *string  `json:"name"`
	Issuer           *string  `json:"issuer"`
	ClientID         *string  `json:"clientId"`
	ClientSecret     *string  `json:"clientSecret"`
	Scopes           []string `json:"scopes"`
	AttributeMapping *Mapping `json:"attributeMapping"`
	AutoProvision    *bool    `json:"autoProvision"`
	DefaultRoleID    *string  `json:"defaultRoleId"`
	AllowedDomains   domains  `json:"allowedDomains"`
	EnforceSSO       *bool    `json:"enforceSSO"`
}

// CreateInput is the create body: the owner, the type and the settings.
type CreateInput struct {
	OrgID     string  `json:"orgId"`
	PartnerID string  `json:"partnerId"`
	Type      *string `json:"type"`
	Settings
}

// StatusInput is the status body.
type StatusInput struct {
	Status *string `json:"status"`
}

// authorize is the preamble of every management route: a user session
// holding perm, in a tenant context or at system scope; writes also need an
// unrestricted caller.
func (s *Service) authorize(ctx context.Context, perm authz.Permission) (*authz.Principal, error) {
	p, err := authz.Require(ctx, perm)
	if err != nil {
		return nil, err
	}
	if err := p.UserSession(); err != nil {
		return nil, err
	}
	if p.Scope != authz.ScopeSystem {
		if err := p.RequireTenantContext(); err != nil {
			return nil, err
		}
	}
	if perm == authz.OrgsWrite {
		if err := p.RequireUnrestricted(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// ownerParam resolves the tenant a list or create names. orgId names an
// organization: organization callers their own (another id is 404), partner
// and system callers one they reach. Without orgId, an organization caller
// means its organization, a partner caller its own partner (a partner
// provider), and a system caller must name orgId or partnerId. partnerId is
// only ever the caller's own partner (another is 404) and never goes with
// orgId.
func ownerParam(p *authz.Principal, orgID, partnerID string) (owner, error) {
	f := fault.Fields{}
	if orgID != "" && !valid.IsUUID(orgID) {
		f.Add("orgId", "must be a UUID")
	}
	if partnerID != "" && !valid.IsUUID(partnerID) {
		f.Add("partnerId", "must be a UUID")
	}
	if orgID != "" && partnerID != "" {
		f.Add("partnerId", "must not be given with orgId")
	}
	if err := f.Err(); err != nil {
		return owner{}, err
	}
	switch {
	case orgID != "" && p.Scope == authz.ScopeOrg && orgID != p.OrgID:
		return owner{}, ErrOrgNotFound
	case orgID != "":
		return owner{OrgID: orgID}, nil
	case partnerID != "" && !p.CanAccessPartner(partnerID):
		return owner{}, ErrPartnerNotFound
	case partnerID != "":
		return owner{PartnerID: partnerID}, nil
	case p.Scope == authz.ScopeOrg:
		return owner{OrgID: p.OrgID, PartnerID: p.PartnerID}, nil
	case p.Scope == authz.ScopePartner:
		return owner{PartnerID: p.PartnerID}, nil
	}
	return owner{}, ErrOrgContext
}

// reachOwner checks that the caller reaches tenant o (an organization through
// tenant.Store.Reach; a partner, its own) and, for writes of a partner
// provider, that a partner caller has access to every organization of the
// partner (the provider signs in the partner's own members, whose orgAccess
// may be all).
func (s *Service) reachOwner(ctx context.Context, p *authz.Principal, o owner, write bool) (owner, error) {
	if !o.isPartner() {
		if p.Scope == authz.ScopeOrg {
			return o, nil
		}
		org, err := s.org(ctx, p, o.OrgID)
		if err != nil {
			return owner{}, err
		}
		return owner{OrgID: org.ID, PartnerID: org.PartnerID}, nil
	}
	if !p.CanAccessPartner(o.PartnerID) {
		return owner{}, ErrPartnerNotFound
	}
	if write {
		if err := p.RequireFullPartnerAccess(); err != nil {
			return owner{}, err
		}
	}
	return o, nil
}

func (s *Service) org(ctx context.Context, p *authz.Principal, id string) (*tenant.Organization, error) {
	o, err := s.Orgs.Reach(ctx, p, id)
	if errors.Is(err, tenant.ErrOrgNotFound) {
		return nil, ErrOrgNotFound
	}
	return o, err
}

// provider reads provider id for p (tenant.Find): an organization's provider
// as the organization, a partner's own provider as a partner caller of that
// partner (PartnerOwned; organization callers, even of the partner's
// organizations, never see it). Writing a partner provider also needs access
// to every organization of the partner (403 otherwise).
func (s *Service) provider(ctx context.Context, p *authz.Principal, id string, write bool) (*record, error) {
	r, err := tenant.Find(ctx, p, id, s.St.inOrg, s.St.ByID, ErrNotFound)
	if err != nil {
		return nil, err
	}
	if write && r.owner().isPartner() {
		if err := p.RequireFullPartnerAccess(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// target is the preamble of a route on one provider: the caller holding perm
// (authorize), then provider id within its reach (provider; a write when perm
// is organizations:write).
func (s *Service) target(ctx context.Context, perm authz.Permission, id string) (*authz.Principal, *record, error) {
	p, err := s.authorize(ctx, perm)
	if err != nil {
		return nil, nil, err
	}
	r, err := s.provider(ctx, p, id, perm == authz.OrgsWrite)
	if err != nil {
		return nil, nil, err
	}
	return p, r, nil
}

// ListPresets returns the provider presets.
func (s *Service) ListPresets(ctx context.Context) ([]Preset, error) {
	if _, err := s.authorize(ctx, authz.OrgsRead); err != nil {
		return nil, err
	}
	return slices.Clone(Presets), nil
}

// ListFilter is the providers list query: the owner (orgId or partnerId, or
// the caller's own), and page and limit or the cursor of the page before (it
// wins over page).
type ListFilter struct {
	OrgID, PartnerID string
	Page, Limit      int
	Cursor           string
}

// List returns one page of the providers of the organization or partner the
// caller names (or its own), oldest first (ties by id): an organization's
// through tenant.List over its list partition (GSI4; Reach checks an orgId of
// a partner or system caller), a partner's own from its partition
// (Store.partnerPage) once the caller reaches the partner.
func (s *Service) List(ctx context.Context, f ListFilter) (*tenant.Page[Provider], error) {
	p, err := s.authorize(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	o, err := ownerParam(p, f.OrgID, f.PartnerID)
	if err != nil {
		return nil, err
	}
	q := tenant.ListQuery[record]{Page: f.Page, Limit: f.Limit, Cursor: f.Cursor}
	var pg *tenant.Page[record]
	if o.isPartner() {
		if o, err = s.reachOwner(ctx, p, o, false); err == nil {
			pg, err = s.St.partnerPage(ctx, o.PartnerID, q)
		}
	} else {
		if p.Scope != authz.ScopeOrg {
			q.OrgID = o.OrgID // Reach checks it
		}
		pg, err = tenant.List(ctx, p, tenant.Listing[record]{St: s.St.St, Orgs: s.Orgs, Name: "SSOPROVS",
			OrgPK: orgListPK, PartnerPK: orgListPK, OrgWide: true}, q)
	}
	if errors.Is(err, tenant.ErrOrgNotFound) {
		return nil, ErrOrgNotFound
	}
	if err != nil {
		return nil, err
	}
	out := &tenant.Page[Provider]{Items: make([]Provider, 0, len(pg.Items)), Page: pg.Page, Limit: pg.Limit, Total: pg.Total, Next: pg.Next}
	for i := range pg.Items {
		out.Items = append(out.Items, *pg.Items[i].view())
	}
	return out, nil
}

// Get returns one provider.
func (s *Service) Get(ctx context.Context, id string) (*Provider, error) {
	_, r, err := s.target(ctx, authz.OrgsRead, id)
	if err != nil {
		return nil, err
	}
	return r.view(), nil
}

// fields is a provider's settings being validated.
type fields struct {
	name, issuer, clientID string
	scopes, domains        []string
	mapping                Mapping
}

// checkIssuer applies the outbound guard and the OpenID issuer form (https, no
// query or fragment); DNS only when the form passes.
func (s *Service) checkIssuer(ctx context.Context, f fault.Fields, raw string) {
	if err := s.Guard.Check(raw); err != nil {
		f.Add("issuer", reason(err))
		return
	}
	if u, err := url.Parse(raw); err != nil || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		f.Add("issuer", "must be an https URL without userinfo, query or fragment")
		return
	}
	if err := s.Guard.Validate(ctx, raw); err != nil {
		f.Add("issuer", reason(err))
	}
}

func reason(err error) string {
	var ue *outbound.URLError
	if errors.As(err, &ue) {
		return ue.Reason
	}
	return "is not a usable URL"
}

func checkText(f fault.Fields, path, s string, max int) {
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		f.Add(path, "must not contain control characters")
		return
	}
	valid.Len(f, path, s, 1, max)
}

// checkScopes validates scopes (nil: the defaults); openid is required.
func checkScopes(f fault.Fields, scopes []string) []string {
	if scopes == nil {
		return slices.Clone(DefaultScopes)
	}
	if len(scopes) > MaxScopes {
		f.Addf("scopes", "must have at most %d entries", MaxScopes)
		return nil
	}
	seen := map[string]bool{}
	for i, sc := range scopes {
		path := fmt.Sprintf("scopes.%d", i)
		ok := sc != "" && len(sc) <= MaxScope
		for _, r := range sc {
			if r <= 0x20 || r > 0x7e || r == '"' || r == '\\' {
				ok = false
			}
		}
		switch {
		case !ok:
			f.Addf(path, "must be 1-%d printable ASCII characters without spaces, quotes or backslashes", MaxScope)
		case seen[sc]:
			f.Add(path, "is a duplicate")
		}
		seen[sc] = true
	}
	if !seen["openid"] {
		f.Add("scopes", "must include openid")
	}
	return scopes
}

// domains is allowedDomains in a body: the spec's comma-separated string
// ("a.example, b.example"; blank parts dropped) or, as Gale also accepts, an
// array of strings. An element of another type is kept as bad, so the check
// names its index (allowedDomains.0); any other value is bad as a whole.
type domains struct {
	items []item
	bad   bool
}

// UnmarshalJSON reads the string or the array; null is an empty list (a
// PATCH's valid.Opt refuses null before this runs).
func (d *domains) UnmarshalJSON(b []byte) error {
	var s *string
	if json.Unmarshal(b, &s) == nil {
		d.items = []item{}
		if s != nil {
			for _, part := range strings.Split(*s, ",") {
				if part = strings.TrimSpace(part); part != "" {
					d.items = append(d.items, item{s: part})
				}
			}
		}
		return nil
	}
	d.bad = json.Unmarshal(b, &d.items) != nil
	return nil
}

// check validates the list (checkDomains); a value neither a string nor an
// array is refused as allowedDomains.
func (d domains) check(f fault.Fields) []string {
	if d.bad {
		f.Add("allowedDomains", "must be a comma-separated string or an array of strings")
		return nil
	}
	if d.items == nil {
		return checkDomains(f, nil)
	}
	return checkDomains(f, texts(f, "allowedDomains", d.items))
}

// joinDomains is allowedDomains in an answer: the spec's comma-separated string.
func joinDomains(ds []string) string { return strings.Join(ds, ",") }

// checkDomains validates allowedDomains (lower-cased, unique DNS names).
func checkDomains(f fault.Fields, ds []string) []string {
	if ds == nil {
		return []string{}
	}
	if len(ds) > MaxDomains {
		f.Addf("allowedDomains", "must have at most %d entries", MaxDomains)
		return nil
	}
	out := make([]string, 0, len(ds))
	for i, d := range ds {
		path := fmt.Sprintf("allowedDomains.%d", i)
		d = strings.ToLower(strings.TrimSpace(d))
		if !domainName(d) {
			f.Add(path, "must be a DNS domain name such as example.com")
			continue
		}
		if slices.Contains(out, d) {
			f.Add(path, "is a duplicate")
			continue
		}
		out = append(out, d)
	}
	return out
}

func domainName(d string) bool {
	if d == "" || len(d) > MaxDomain || !strings.Contains(d, ".") {
		return false
	}
	for _, l := range strings.Split(d, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

func checkMapping(f fault.Fields, m *Mapping) Mapping {
	if m == nil {
		return Mapping{}
	}
	for path, v := range map[string]string{"email": m.Email, "name": m.Name, "firstName": m.FirstName, "lastName": m.LastName, "groups": m.Groups} {
		if v != "" && (len(v) > MaxClaimName || strings.IndexFunc(v, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0) {
			f.Addf("attributeMapping."+path, "must be a claim name of at most %d characters without spaces", MaxClaimName)
		}
	}
	return *m
}

// defaultRole resolves a default role for tenant o: for an organization an
// organization system role or a custom role of o, for a partner a partner
// system role or a custom role of the partner; p must hold its every
// permission (the provider will grant it to new accounts).
func (s *Service) defaultRole(ctx context.Context, p *authz.Principal, o owner, id string) (user.RoleInfo, error) {
	if !valid.IsUUID(id) {
		return user.RoleInfo{}, fault.Invalid("defaultRoleId", "must be a UUID")
	}
	scope, scopeErr := authz.ScopeOrg, ErrRoleScope
	if o.isPartner() {
		scope, scopeErr = authz.ScopePartner, ErrPartnerRoleScope
	}
	r, err := s.Roles.Assignee(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return user.RoleInfo{}, ErrRoleNotFound
	case err != nil:
		return user.RoleInfo{}, err
	case r.IsSystem && r.Scope != scope:
		return user.RoleInfo{}, scopeErr
	case !r.IsSystem && r.Owner != o.pk():
		return user.RoleInfo{}, ErrRoleNotFound
	}
	for perm := range r.Effective {
		if !p.Holds(perm) {
			return user.RoleInfo{}, ErrRoleCeiling
		}
	}
	return r, nil
}

// Create adds a provider to an organization the caller can reach.
func (s *Service) Create(ctx context.Context, in CreateInput) (*Provider, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if in.Type != nil && *in.Type == TypeSAML {
		return nil, ErrSAML
	}
	o, err := ownerParam(p, in.OrgID, in.PartnerID)
	if err != nil {
		return nil, err
	}
	r, roleID, err := s.validateCreate(ctx, o, in)
	if err != nil {
		return nil, err
	}
	if o, err = s.reachOwner(ctx, p, o, true); err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	r.ID, r.OrgID, r.PartnerID, r.Status, r.CreatedBy = uuid.NewString(), o.OrgID, o.PartnerID, StatusInactive, p.UserID
	r.CreatedAt, r.UpdatedAt, r.Version, r.Ceiling = now, now, 1, ceilingList(p.Perms)
	if roleID != "" {
		ri, err := s.defaultRole(ctx, p, o, roleID)
		if err != nil {
			return nil, err
		}
		r.DefaultRoleID, r.DefaultRoleOwner = ri.ID, ri.Owner
	}
	r.Keys = key(o, r.ID)
	if in.ClientSecret != nil {
		if r.ClientSecret, err = s.seal(r.ID, *in.ClientSecret); err != nil {
			return nil, err
		}
	}
	if err := s.St.St.Commit(ctx, s.createTx(p, o, r)); err != nil {
		var te *store.TxError
		switch {
		case errors.As(err, &te) && te.FailedAt(1):
			return nil, ErrClientTaken
		case errors.As(err, &te) && o.isPartner() && te.FailedAt(2):
			return nil, ErrPartnerNotFound
		}
		return nil, fmt.Errorf("create SSO provider: %w", err)
	}
	return r.view(), nil
}

// validateCreate answers the provider in describes for owner o (its
// settings, still without id, owner and times) and the default role it
// names, or the fields at fault; the issuer is checked by discovery.
func (s *Service) validateCreate(ctx context.Context, o owner, in CreateInput) (*record, string, error) {
	f := fault.Fields{}
	if o.isPartner() && in.EnforceSSO != nil && *in.EnforceSSO {
		f.Add("enforceSSO", "is available for organization providers only")
	}
	if in.Type != nil && *in.Type != TypeOIDC {
		f.Add("type", "must be oidc or saml")
	}
	r := &record{Type: TypeOIDC, Name: valid.Required(f, "name", in.Name)}
	if in.Name != nil {
		r.Name = strings.TrimSpace(*in.Name)
		valid.Name(f, "name", r.Name, MaxName)
	}
	r.ClientID = valid.Required(f, "clientId", in.ClientID)
	if in.ClientID != nil {
		checkText(f, "clientId", r.ClientID, MaxClientID)
	}
	if in.ClientSecret != nil {
		checkText(f, "clientSecret", *in.ClientSecret, MaxSecret)
	}
	r.Scopes = checkScopes(f, in.Scopes)
	r.AllowedDomains = in.AllowedDomains.check(f)
	r.Mapping = checkMapping(f, in.AttributeMapping)
	r.AutoProvision = in.AutoProvision != nil && *in.AutoProvision
	r.EnforceSSO = in.EnforceSSO != nil && *in.EnforceSSO
	roleID := ""
	if in.DefaultRoleID != nil {
		roleID = *in.DefaultRoleID
		if !valid.IsUUID(roleID) {
			f.Add("defaultRoleId", "must be a UUID")
		}
	}
	if r.AutoProvision && roleID == "" {
		f.Add("defaultRoleId", "is required when autoProvision is on")
	}
	r.Issuer = valid.Required(f, "issuer", in.Issuer)
	switch {
	case in.Issuer != nil && r.Issuer == "":
		f.Add("issuer", "is required")
	case in.Issuer != nil:
		s.checkIssuer(ctx, f, r.Issuer)
	}
	if err := f.Err(); err != nil {
		return nil, "", err
	}
	return r, roleID, nil
}

// createTx is the creation's one transaction: the provider's row and its
// client guard (the second, which claims the issuer and client id pair), the
// partner's presence for a partner provider (a system caller names any id),
// the audit record. Create reads a failure by these positions.
func (s *Service) createTx(p *authz.Principal, o owner, r *record) *store.Tx {
	tx := (&store.Tx{}).Add(putNew(r)...)
	if o.isPartner() {
		pk := tenant.PartnerKeys(o.PartnerID)
		tx.Add(store.Assert(pk.PK, pk.SK, store.Present()))
	}
	return tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: r.OrgID,
		PartnerID: r.PartnerID, Action: "sso.provider.create", ResourceType: "sso_provider", ResourceID: r.ID,
		ResourceName: r.Name, Details: map[string]any{"issuer": r.Issuer, "clientId": r.ClientID, "autoProvision": r.AutoProvision}}))
}

func (s *Service) seal(id, v string) (string, error) {
	return s.Box.Seal([]byte(v), "sso:"+id+":clientSecret")
}

func (s *Service) clientSecret(r *record) (string, error) {
	if r.ClientSecret == "" {
		return "", nil
	}
	b, err := s.Box.Open(r.ClientSecret, "sso:"+r.ID+":clientSecret")
	if err != nil {
		return "", fmt.Errorf("open client secret of SSO provider %s: %w", r.ID, err)
	}
	return string(b), nil
}

// Update applies a PATCH: validate into a change, diff it against the stored
// provider, one write.
func (s *Service) Update(ctx context.Context, id string, in PatchInput) (*Provider, error) {
	p, r, err := s.target(ctx, authz.OrgsWrite, id)
	if err != nil {
		return nil, err
	}
	fields := in.fields()
	if len(fields) == 0 {
		return nil, ErrNoUpdates
	}
	c, err := s.checkPatch(ctx, in, r)
	if err != nil {
		return nil, err
	}
	next, err := s.patched(ctx, p, r, c)
	if err != nil {
		return nil, err
	}
	tx, guard := patchTx(r, next)
	return s.commitChange(ctx, p, tx, r, next, map[string]any{"fields": fields}, guard, ErrClientTaken)
}

// commitChange commits tx, the change of provider r to next (update or
// status), with its audit record (sso.provider.update, details): a failed
// condition of the write on is answered with onErr, any other (the CAS on
// version) with ErrRaceLost.
func (s *Service) commitChange(ctx context.Context, p *authz.Principal, tx *store.Tx, r, next *record, details map[string]any, on *store.Write, onErr error) (*Provider, error) {
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: r.OrgID, PartnerID: r.PartnerID,
		Action: "sso.provider.update", ResourceType: "sso_provider", ResourceID: r.ID, ResourceName: next.Name, Details: details}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		switch {
		case errors.As(err, &te) && on != nil && te.FailedOn(on):
			return nil, onErr
		case errors.As(err, &te):
			return nil, ErrRaceLost
		}
		return nil, fmt.Errorf("update SSO provider %s: %w", r.ID, err)
	}
	return next.view(), nil
}

// SetStatus moves a provider to active, inactive or testing.
func (s *Service) SetStatus(ctx context.Context, id string, in StatusInput) (*Provider, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	to := valid.Required(f, "status", in.Status)
	if in.Status != nil {
		valid.OneOf(f, "status", to, StatusActive, StatusInactive, StatusTesting)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	r, err := s.provider(ctx, p, id, true)
	if err != nil {
		return nil, err
	}
	if r.Status == to {
		return r.view(), nil
	}
	next := *r
	next.Status, next.Version, next.UpdatedAt = to, r.Version+1, clock.Format(s.Clock.Now())
	next.Ceiling = ceilingList(intersect(ceilingSet(r.Ceiling), p.Perms))
	tx := (&store.Tx{}).Add(replace(&next, r.Version))
	var act *store.Write
	switch {
	case to == StatusActive:
		act = tx.Include(activate(&next))
	case r.Status == StatusActive:
		tx.Add(deactivate(r))
	}
	return s.commitChange(ctx, p, tx, r, &next, map[string]any{"status": to, "previousStatus": r.Status}, act, ErrAnotherActive)
}

// Delete removes a provider with every identity linked through it. Identities
// go first (in transactions of 100), so an interrupted delete leaves the
// provider in place and a retry finishes it.
func (s *Service) Delete(ctx context.Context, id string) error {
	p, r, err := s.target(ctx, authz.OrgsWrite, id)
	if err != nil {
		return err
	}
	ids, err := s.St.Identities(ctx, r.ID)
	if err != nil {
		return err
	}
	for start := 0; start < len(ids); start += store.MaxTxItems {
		tx := &store.Tx{}
		for i := start; i < min(start+store.MaxTxItems, len(ids)); i++ {
			tx.Add(deleteIdentity(&ids[i]))
		}
		if err := s.St.St.Commit(ctx, tx); err != nil {
			return fmt.Errorf("delete identities of SSO provider %s: %w", r.ID, err)
		}
	}
	tx := (&store.Tx{}).Add(deleteProvider(r), dropGuard(r.Issuer, r.ClientID, r.ID))
	if r.Status == StatusActive {
		tx.Add(deactivate(r))
	}
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: r.OrgID, PartnerID: r.PartnerID,
		Action: "sso.provider.delete", ResourceType: "sso_provider", ResourceID: r.ID, ResourceName: r.Name,
		Details: map[string]any{"identities": len(ids)}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			return ErrRaceLost
		}
		return fmt.Errorf("delete SSO provider %s: %w", r.ID, err)
	}
	return nil
}

// Test runs OpenID discovery against the provider's issuer through the
// outbound client and reports what it found or why it failed.
func (s *Service) Test(ctx context.Context, id string) (*TestResult, error) {
	_, r, err := s.target(ctx, authz.OrgsWrite, id)
	if err != nil {
		return nil, err
	}
	res := &TestResult{Issuer: r.Issuer}
	prov, err := s.discover(ctx, r.Issuer)
	if err != nil {
		res.Error = err.Error()
		return res, nil
	}
	var meta struct {
		JWKS    string   `json:"jwks_uri"`
		Scopes  []string `json:"scopes_supported"`
		Methods []string `json:"code_challenge_methods_supported"`
	}
	_ = prov.Claims(&meta)
	ep := prov.Endpoint()
	res.Success = true
	res.AuthorizationEndpoint, res.TokenEndpoint, res.UserinfoEndpoint = ep.AuthURL, ep.TokenURL, prov.UserInfoEndpoint()
	res.JWKSURI, res.ScopesSupported, res.PKCEMethods = meta.JWKS, meta.Scopes, meta.Methods
	if len(meta.Methods) > 0 && !slices.Contains(meta.Methods, "S256") {
		res.Success, res.Error = false, "the provider does not offer PKCE S256"
	}
	return res, nil
}

// ceilingList is a permission set as stored (sorted "resource:action").
func ceilingList(set authz.Set) []string {
	out := make([]string, 0, len(set))
	for perm, ok := range set {
		if ok {
			out = append(out, perm.String())
		}
	}
	slices.Sort(out)
	return out
}

// ceilingSet reads a stored ceiling; a provider written before ceilings were
// kept has none and admits only roles without permissions (fail closed: an
// administrator re-saves it).
func ceilingSet(list []string) authz.Set {
	set := authz.Set{}
	for _, s := range list {
		if perm, ok := authz.Parse(s); ok {
			set[perm] = true
		}
	}
	return set
}

// intersect is what both sets grant, wildcards included ("*:*" and
// "devices:*" narrow to the other side's specific permissions).
func intersect(a, b authz.Set) authz.Set {
	out := authz.Set{}
	for perm, ok := range a {
		if ok && b.Has(perm) {
			out[perm] = true
		}
	}
	for perm, ok := range b {
		if ok && a.Has(perm) {
			out[perm] = true
		}
	}
	return out
}
