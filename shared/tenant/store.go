package tenant

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the tenancy rows of the package doc. Reads by
// organization take the organization id (it is the partition); reads by a site's
// or device group's own id go through GSI1 and leave the access decision to the
// caller, which must check the organization the item names.
type Store struct{ St *store.Store }

// Counter names a child count kept on an organization, a site or a device group.
type Counter string

// Counters. Every package that creates or removes a child of an organization
// (a membership, a device) adds the matching count write to its transaction, so
// deleting a non-empty organization or site is refused without a scan.
const (
	CountSites   Counter = "siteCount"
	CountGroups  Counter = "groupCount"
	CountMembers Counter = "memberCount"
	CountDevices Counter = "deviceCount"
)

// MFA methods an organization may allow.
var MFAMethods = []string{"totp", "sms", "passkey"}

// DefaultSecurity is the policy of an organization that never set one.
func DefaultSecurity(orgID string) SecuritySettings {
	k := SecurityKey(orgID)
	return SecuritySettings{Keys: store.Keys{PK: k.PK, SK: k.SK}, OrgID: orgID,
		AllowedMFAMethods: append([]string(nil), MFAMethods...)}
}

// Org reads organization id (consistent read); store.ErrNotFound when absent.
func (s Store) Org(ctx context.Context, id string) (*Organization, error) {
	var o Organization
	k := OrgKey(id)
	if err := s.St.Get(ctx, k.PK, k.SK, &o); err != nil {
		return nil, fmt.Errorf("get organization %s: %w", id, err)
	}
	return &o, nil
}

// PartnerOrgs lists the organizations of partnerID (one GSI1 query).
func (s Store) PartnerOrgs(ctx context.Context, partnerID string) ([]Organization, error) {
	out := []Organization{}
	if err := s.St.AllInto(ctx, store.Query{Index: store.GSI1, PK: store.PartnerPK(partnerID) + "#ORGS"}, &out); err != nil {
		return nil, fmt.Errorf("organizations of partner %s: %w", partnerID, err)
	}
	return out, nil
}

// AllOrgs lists every organization (one GSI2 query; system scope).
func (s Store) AllOrgs(ctx context.Context) ([]Organization, error) {
	out := []Organization{}
	if err := s.St.AllInto(ctx, store.Query{Index: store.GSI2, PK: "ORGS"}, &out); err != nil {
		return nil, fmt.Errorf("all organizations: %w", err)
	}
	return out, nil
}

// OrgsByID reads the organizations of ids that exist (store.BatchGet makes one
// BatchGetItem per 100 ids).
func (s Store) OrgsByID(ctx context.Context, ids []string) ([]Organization, error) {
	out := []Organization{}
	refs := make([]store.KeyRef, len(ids))
	for i, id := range ids {
		refs[i] = OrgKey(id)
	}
	items, err := s.St.BatchGet(ctx, refs...)
	if err != nil {
		return nil, fmt.Errorf("organizations by id: %w", err)
	}
	for _, it := range items {
		var o Organization
		if err := store.Unmarshal(it, &o); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// OrgAndSecurity reads organization id and its security settings in one call;
// settings never written are DefaultSecurity.
func (s Store) OrgAndSecurity(ctx context.Context, id string) (*Organization, SecuritySettings, error) {
	ok, sk := OrgKey(id), SecurityKey(id)
	items, err := s.St.BatchGet(ctx, ok, sk)
	if err != nil {
		return nil, SecuritySettings{}, fmt.Errorf("organization %s with security settings: %w", id, err)
	}
	oi, found := items[ok.PK+"|"+ok.SK]
	if !found {
		return nil, SecuritySettings{}, fmt.Errorf("get organization %s: %w", id, store.ErrNotFound)
	}
	var o Organization
	if err := store.Unmarshal(oi, &o); err != nil {
		return nil, SecuritySettings{}, err
	}
	sec := DefaultSecurity(id)
	if si, found := items[sk.PK+"|"+sk.SK]; found {
		if err := store.Unmarshal(si, &sec); err != nil {
			return nil, SecuritySettings{}, err
		}
	}
	return &o, sec, nil
}

// SecuritySettings reads organization orgID's MFA policy (one GetItem), or
// DefaultSecurity when none was set. It makes no access decision: it is for other
// packages (sign-in, MFA setup) that already know the organization.
func (s Store) SecuritySettings(ctx context.Context, orgID string) (SecuritySettings, error) {
	sec := DefaultSecurity(orgID)
	k := SecurityKey(orgID)
	err := s.St.Get(ctx, k.PK, k.SK, &sec)
	switch {
	case err == nil:
		return sec, nil
	case isNotFound(err):
		return DefaultSecurity(orgID), nil
	}
	return SecuritySettings{}, fmt.Errorf("security settings of %s: %w", orgID, err)
}

// Site reads site id of organization orgID (consistent read).
func (s Store) Site(ctx context.Context, orgID, id string) (*Site, error) {
	var st Site
	k := SiteKeys(orgID, id)
	if err := s.St.Get(ctx, k.PK, k.SK, &st); err != nil {
		return nil, fmt.Errorf("get site %s: %w", id, err)
	}
	return &st, nil
}

// SiteByID finds site id of whatever organization (GSI1, eventually consistent).
// The caller decides whether the organization it names is visible.
func (s Store) SiteByID(ctx context.Context, id string) (*Site, error) {
	var out []Site
	if err := s.St.AllInto(ctx, store.Query{Index: store.GSI1, PK: "SITEREF#" + id, SKPrefix: "SITE"}, &out); err != nil {
		return nil, fmt.Errorf("site %s: %w", id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("site %s: %w", id, store.ErrNotFound)
	}
	return &out[0], nil
}

// Group reads device group id of organization orgID (consistent read).
func (s Store) Group(ctx context.Context, orgID, id string) (*DeviceGroup, error) {
	var g DeviceGroup
	k := GroupKeys(orgID, id)
	if err := s.St.Get(ctx, k.PK, k.SK, &g); err != nil {
		return nil, fmt.Errorf("get device group %s: %w", id, err)
	}
	return &g, nil
}

// GroupByID finds device group id of whatever organization (GSI1, eventually
// consistent). The caller decides whether the organization it names is visible.
func (s Store) GroupByID(ctx context.Context, id string) (*DeviceGroup, error) {
	var out []DeviceGroup
	if err := s.St.AllInto(ctx, store.Query{Index: store.GSI1, PK: "DGROUPREF#" + id, SKPrefix: "DGROUP"}, &out); err != nil {
		return nil, fmt.Errorf("device group %s: %w", id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("device group %s: %w", id, store.ErrNotFound)
	}
	return &out[0], nil
}

// Commit runs a transaction (see store.Store.Commit).
func (s Store) Commit(ctx context.Context, tx *store.Tx) error { return s.St.Commit(ctx, tx) }

// CountOrg adds delta to counter c of organization orgID. The write requires the
// organization to exist and, when partnerID is not "", to belong to that partner:
// added to a child's create, it makes the create fail rather than orphan the child
// when the organization is gone (or is not the caller's).
func CountOrg(orgID, partnerID string, c Counter, delta int) *store.Write {
	k := OrgKey(orgID)
	return ownedBy(store.Change(k.PK, k.SK, add(c, delta)), partnerID).Exists()
}

// CheckOrg asserts, inside a transaction, that organization orgID exists and,
// when partnerID is not "", belongs to that partner.
func CheckOrg(orgID, partnerID string) *store.Write {
	k := OrgKey(orgID)
	return ownedBy(store.Assert(k.PK, k.SK, store.Present()), partnerID).Exists()
}

// CountSite adds delta to counter c of site siteID of organization orgID; the
// site must exist (so a child cannot land in a deleted or foreign site).
func CountSite(orgID, siteID string, c Counter, delta int) *store.Write {
	k := SiteKeys(orgID, siteID)
	return store.Change(k.PK, k.SK, add(c, delta)).Exists()
}

// CountGroup adds delta to the device count of device group groupID; the group
// must exist.
func CountGroup(orgID, groupID string, delta int) *store.Write {
	k := GroupKeys(orgID, groupID)
	return store.Change(k.PK, k.SK, add(CountDevices, delta)).Exists()
}

func add(c Counter, delta int) expression.UpdateBuilder {
	return expression.Add(expression.Name(string(c)), expression.Value(delta))
}

func ownedBy(w *store.Write, partnerID string) *store.Write {
	if partnerID == "" {
		return w
	}
	return w.When(store.Is("partnerId", partnerID))
}

// empty is the condition that every named counter is zero (or was never set).
func empty(w *store.Write, counters ...Counter) *store.Write {
	zero := func(c Counter) expression.ConditionBuilder {
		return expression.Name(string(c)).AttributeNotExists().Or(store.Is(string(c), 0))
	}
	cond := zero(counters[0])
	for _, c := range counters[1:] {
		cond = cond.And(zero(c))
	}
	return w.When(cond).Exists()
}

// changeWrite applies the non-empty assignments of set (attribute → value) and
// updatedAt to the item at k, which must exist.
func changeWrite(k store.KeyRef, set map[string]any, updatedAt string) *store.Write {
	upd := expression.Set(expression.Name("updatedAt"), expression.Value(updatedAt))
	for n, v := range set {
		upd = upd.Set(expression.Name(n), expression.Value(v))
	}
	return store.Change(k.PK, k.SK, upd).Exists()
}

// checkPartner asserts, inside a transaction, that partner id exists.
func checkPartner(id string) *store.Write {
	k := PartnerKeys(id)
	return store.Assert(k.PK, k.SK, store.Present())
}

// deleteSecurity removes an organization's security settings (if any).
func deleteSecurity(orgID string) *store.Write {
	k := SecurityKey(orgID)
	return store.Delete(k.PK, k.SK)
}

// deleteOrg removes an organization that has no children.
func deleteOrg(id string) *store.Write {
	k := OrgKey(id)
	return empty(store.Delete(k.PK, k.SK), CountSites, CountGroups, CountMembers, CountDevices)
}

// deleteSite removes a site that has no device groups and no devices.
func deleteSite(orgID, id string) *store.Write {
	k := SiteKeys(orgID, id)
	return empty(store.Delete(k.PK, k.SK), CountGroups, CountDevices)
}

// updateGroup sets device group id's name (and its list sort key) and site, provided its site is still
// oldSite ("" for none): a compare-and-swap, so the site counters moved in the
// same transaction stay right when two moves race.
func updateGroup(orgID, id, name, oldSite, newSite string) *store.Write {
	k := GroupKeys(orgID, id)
	var site any // nil is stored as NULL
	if newSite != "" {
		site = newSite
	}
	upd := expression.Set(expression.Name("name"), expression.Value(name)).
		Set(expression.Name("GSI4SK"), expression.Value(listSK(name, id))).
		Set(expression.Name("siteId"), expression.Value(site))
	was := store.Is("siteId", oldSite)
	if oldSite == "" {
		was = expression.Name("siteId").AttributeNotExists().Or(expression.Name("siteId").AttributeType(expression.Null))
	}
	return store.Change(k.PK, k.SK, upd).When(was).Exists()
}

// deleteGroup removes a device group that has no devices.
func deleteGroup(orgID, id string) *store.Write {
	k := GroupKeys(orgID, id)
	return empty(store.Delete(k.PK, k.SK), CountDevices)
}

// SeedOrg is an organization that Seed creates with its sites.
type SeedOrg struct {
	ID, Name string
	Sites    []string
}

// Seed creates partner partnerID (named name) with organizations orgs and their
// sites in one transaction, unless the partner exists already (created is then
// false and nothing is written). Site ids are derived from the organization id
// and the site's name, so the same seed finds the same rows. It is for demo
// data, which knows its ids.
func (s Store) Seed(ctx context.Context, clk clock.Clock, partnerID, name string, orgs []SeedOrg) (created bool, err error) {
	var existing Partner
	err = s.St.Get(ctx, PartnerKeys(partnerID).PK, "PARTNER", &existing)
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	now := clock.Format(clk.Now())
	tx := (&store.Tx{}).Add(store.PutNew(Partner{Keys: PartnerKeys(partnerID), ID: partnerID, Name: name, CreatedAt: now, UpdatedAt: now}))
	for _, o := range orgs {
		org := &Organization{Keys: OrgKeys(o.ID, partnerID), ID: o.ID, PartnerID: partnerID, Name: o.Name,
			Status: OrgActive, SiteCount: len(o.Sites), CreatedAt: now, UpdatedAt: now}
		org.SetListKeys()
		tx.Add(store.PutNew(org))
		for i, site := range o.Sites {
			id := uuid.NewSHA1(uuid.MustParse(o.ID), []byte(fmt.Sprintf("site-%d-%s", i, site))).String()
			st := &Site{Keys: SiteKeys(o.ID, id), ID: id, OrgID: o.ID, Name: site, Timezone: "UTC", CreatedAt: now, UpdatedAt: now}
			st.SetListKeys()
			tx.Add(store.PutNew(st))
		}
	}
	if err := s.St.Commit(ctx, tx); err != nil {
		return false, fmt.Errorf("seed partner %s: %w", partnerID, err)
	}
	return true, nil
}
