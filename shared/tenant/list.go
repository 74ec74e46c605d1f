package tenant

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/store"
)

// ListOrgs reads the organizations a list's scope and total need; Store
// satisfies it.
type ListOrgs interface {
	Reach(ctx context.Context, p *authz.Principal, id string) (*Organization, error)
	PartnerOrgs(ctx context.Context, partnerID string) ([]Organization, error)
	OrgsByID(ctx context.Context, ids []string) ([]Organization, error)
	AllOrgs(ctx context.Context) ([]Organization, error)
}

// Listing is one list the list indexes hold, as its service declares it once.
type Listing[T any] struct {
	St   *store.Store
	Orgs ListOrgs
	// Name ties a system caller's cursor to its list ("DEVICES").
	Name string
	// OrgPK and PartnerPK build the list's GSI4 and GSI3 partitions.
	OrgPK, PartnerPK func(id string) string
	// Descending reads the indexes in descending sort-key order.
	Descending bool
	// Counter is the list's per-organization counter on the Organization row
	// (kept in the transaction of each create and delete); nil when the list
	// has none and its totals are counted.
	Counter func(*Organization) int
	// Companion names each item's companion row (store.Companion), read with
	// the page and laid over its item; nil for none.
	Companion store.Companion
	// OrgWide tells that the rows have no site or device group, so a site-
	// or device-group-restricted caller sees every row of an organization it
	// reaches (Keep checks the organization only): its total is counted as
	// anyone's.
	OrgWide bool
	// Self tells that the rows are the organizations themselves (the
	// organizations list): a partner's partition then holds only its
	// organizations that exist, so a partner's list reads no organizations
	// before its page, and a system caller's total is the organizations read.
	Self bool
}

// ListFilter is a list request of the tenancy routes (organizations, sites,
// device groups): OrgID names the organization of a site or device-group list.
type ListFilter struct {
	OrgID       string
	Page, Limit int
	Cursor      string
}

// ListQuery is one request of a list. OrgID (optional) is validated by the
// caller; Page and Limit below 1 count as 1; Cursor (the Next of the page
// before) wins over Page.
type ListQuery[T any] struct {
	OrgID       string
	Page, Limit int
	Cursor      string
	// Keep decides on a row decoded from an index row (keys and
	// store.ListAttributes only): what the caller's organization reach does
	// not decide (its site or device-group restriction), and the request's
	// filters; nil keeps every row. List checks the organization reach of an
	// Owned T itself.
	Keep func(*T) bool
	// Filtered tells that Keep applies request filters besides reach, so no
	// counter and no Select COUNT gives the total.
	Filtered bool
	// Parts, when set, splits each partition of the list (OrgPK's and
	// PartnerPK's) in several, the partition key followed by "#" and a part
	// (elevation requests: one for the live statuses, one per final status).
	// One part reads that partition alone; several are read side by side and
	// merged by sort key (store.Merge), so the sort keys must be unique across
	// the parts.
	Parts []string
	// Uncounted lists never count: a total the read did not reach is a lower
	// bound (the rows up to the end of the page, and one more when a next
	// page exists), so a page costs the same whatever the list's size. For
	// lists of history that no counter holds.
	Uncounted bool
}

// Page is one page of a list with the list's total.
type Page[T any] struct {
	Items              []T
	Page, Limit, Total int
	// Next is the cursor of the following page, "" on the last page.
	Next string
}

// Envelope is the page as the API answers it: {data, pagination}.
func (p *Page[T]) Envelope() httpapi.List[T] {
	return httpapi.List[T]{Data: p.Items, Pagination: httpapi.Pagination{Page: p.Page, Limit: p.Limit, Total: p.Total, NextCursor: p.Next}}
}

// List reads one page of l for p (the caller has authorized p): the one list
// read of the organization-owned rows that the list indexes hold (GSI4 per
// organization, GSI3 per partner; store's doc).
//
// List picks the partition by the caller's scope:
//
//   - an orgId, or an organization caller: the organization's GSI4 partition
//     (after Reach when an orgId is given);
//   - a partner caller without orgId: the partner's GSI3 partition, after one
//     read of the organizations the caller reaches (the partner's, or a
//     selected grant's); rows of other organizations (outside the grant, or
//     deleted since: their keys, scripts and alerts outlive them) and rows
//     beyond a site or device-group restriction are dropped on the index rows;
//   - a system caller without orgId: every partner's GSI3 partition and the
//     GSI4 partition of each organization without a partner, merged by sort key
//     (store.Merge; the organizations are read once to find the partitions,
//     and rows of deleted organizations are dropped the same way);
//   - anyone else: an empty page, nothing read.
//
// It reads one page (store.Window, store.Merge) and a total: the read's own
// when it reached the list's end; otherwise, when neither the request's
// filters nor the caller's restriction drop rows, the sum of the organizations'
// counters (Listing.Counter, from the organizations already read: no call);
// otherwise a count of the kept index rows (store.Count; Select COUNT for one
// organization's partition, which holds no other organization's rows).
//
// A list split by ListQuery.Parts reads each partition above as its parts,
// merged by sort key (store.Merge) when there are several. An Uncounted list
// never counts: its total is the read's own or a lower bound.
//
// Keep sees a T decoded from an index row, so what it tests must be projected
// (store.ListAttributes). A T that is Owned is kept only when p reaches its
// organization, before Keep: the reach of every list is decided here once. A cursor is bound to its partition (or, for the
// merged list, to Listing.Name); another is 400 naming cursor.
func List[T any](ctx context.Context, p *authz.Principal, l Listing[T], q ListQuery[T]) (*Page[T], error) {
	q.Page, q.Limit = max(q.Page, 1), max(q.Limit, 1)
	keep := func(it store.Item) bool {
		var v T
		_ = attributevalue.UnmarshalMap(it, &v) // projected attributes only
		if o, ok := any(&v).(Owned); ok && !p.CanAccessOrg(o.Owner()) {
			return false
		}
		return q.Keep == nil || q.Keep(&v)
	}
	// every: the partition holds only rows the caller sees and asked for.
	every := !q.Filtered && (l.OrgWide || p.RequireUnrestricted() == nil)
	w := store.Window{Keep: keep, Offset: store.Offset(q.Page, q.Limit), Limit: q.Limit, Cursor: q.Cursor}
	var total func() (int, error)
	var parts []store.Query
	var err error
	switch v := p.Visible(); {
	case q.OrgID != "" || (p.Scope == authz.ScopeOrg && p.OrgID != ""):
		parts, total, err = l.orgParts(ctx, p, q, keep, every)
	case v.All:
		return l.merge(ctx, q, keep, every)
	case p.Scope == authz.ScopePartner && (v.PartnerID != "" || len(v.OrgIDs) > 0):
		parts, w.Keep, total, err = l.partnerParts(ctx, p, v, q, keep, every)
	default:
		return &Page[T]{Items: []T{}, Page: q.Page, Limit: q.Limit}, nil
	}
	if err != nil {
		return nil, err
	}
	pg, err := l.read(ctx, w, parts)
	if err != nil {
		return nil, err
	}
	out, err := page[T](pg, q.Limit)
	if err != nil {
		return nil, err
	}
	if out.Total < 0 && q.Uncounted {
		out.Total = lowerBound(pg)
	}
	if out.Total < 0 {
		if out.Total, err = total(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// orgParts answers the partitions of one organization's list (the one asked
// for, reached first, or the caller's own) and how to count its rows: by the
// organization's counter when every row counts and there is one, else by
// counting the partitions.
func (l Listing[T]) orgParts(ctx context.Context, p *authz.Principal, q ListQuery[T], keep func(store.Item) bool, every bool) ([]store.Query, func() (int, error), error) {
	var o *Organization
	id := q.OrgID
	if id != "" {
		var err error
		if o, err = l.Orgs.Reach(ctx, p, id); err != nil {
			return nil, nil, err
		}
	} else {
		id = p.OrgID
	}
	parts := l.partitions(store.GSI4, l.OrgPK(id), q.Parts)
	total := func() (int, error) {
		if !every || l.Counter == nil {
			n := 0
			for _, qu := range parts {
				c, err := l.count(ctx, qu, every, keep)
				if err != nil {
					return 0, err
				}
				n += c
			}
			return n, nil
		}
		if o == nil {
			var err error
			if o, err = l.Orgs.Reach(ctx, p, id); err != nil {
				return 0, err
			}
		}
		return l.Counter(o), nil
	}
	return parts, total, nil
}

// partnerParts answers the partitions of a partner caller's list, the keep
// that holds it to the organizations read here, and how to count its rows.
// The partner's partition may hold rows of organizations deleted since (their
// keys, scripts, filters and alerts outlive them) or outside a selected grant:
// rows are kept only for the organizations read here, whose counters also
// give the total.
func (l Listing[T]) partnerParts(ctx context.Context, p *authz.Principal, v authz.Visibility, q ListQuery[T], keep func(store.Item) bool, every bool) ([]store.Query, func(store.Item) bool, func() (int, error), error) {
	var orgs []Organization
	var err error
	switch {
	case l.Self: // the partition holds the organizations; keep holds a selected grant to its own (Owned)
	case v.PartnerID == "":
		orgs, err = l.Orgs.OrgsByID(ctx, v.OrgIDs)
	default:
		orgs, err = l.Orgs.PartnerOrgs(ctx, v.PartnerID)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	orgs = slices.DeleteFunc(orgs, func(o Organization) bool { return !p.CanAccessOrg(o.Ref()) })
	live := keep
	if !l.Self {
		live = liveOnly(orgs, keep)
	}
	parts := l.partitions(store.GSI3, l.PartnerPK(p.PartnerID), q.Parts)
	total := func() (int, error) {
		n := 0
		if !every || l.Counter == nil {
			for _, qu := range parts {
				c, err := l.St.Count(ctx, qu, live)
				if err != nil {
					return 0, err
				}
				n += c
			}
			return n, nil
		}
		for i := range orgs {
			n += l.Counter(&orgs[i])
		}
		return n, nil
	}
	return parts, live, total, nil
}

// read reads the page of w from one partition (store.Window) or several
// merged in order (store.Merge).
func (l Listing[T]) read(ctx context.Context, w store.Window, parts []store.Query) (store.WindowPage, error) {
	w.Companion = l.Companion
	if len(parts) == 1 {
		w.Query = parts[0]
		return l.St.Window(ctx, w)
	}
	return l.St.Merge(ctx, store.Merge{Name: l.Name, Queries: parts, Keep: w.Keep, Offset: w.Offset, Limit: w.Limit, Cursor: w.Cursor, Companion: l.Companion})
}

// merge is the list of a system caller without orgId (store.Merge).
func (l Listing[T]) merge(ctx context.Context, q ListQuery[T], keep func(store.Item) bool, every bool) (*Page[T], error) {
	orgs, err := l.Orgs.AllOrgs(ctx)
	if err != nil {
		return nil, err
	}
	var partners []string
	var queries []store.Query
	seen := map[string]bool{}
	for _, o := range orgs {
		if o.PartnerID == "" {
			queries = append(queries, l.partitions(store.GSI4, l.OrgPK(o.ID), q.Parts)...)
		} else if !seen[o.PartnerID] {
			seen[o.PartnerID] = true
			partners = append(partners, o.PartnerID)
		}
	}
	slices.Sort(partners)
	for _, id := range partners {
		queries = append(queries, l.partitions(store.GSI3, l.PartnerPK(id), q.Parts)...)
	}
	if !l.Self { // an organization's own row goes with it
		keep = liveOnly(orgs, keep)
	}
	pg, err := l.St.Merge(ctx, store.Merge{Name: l.Name, Queries: queries, Keep: keep,
		Offset: store.Offset(q.Page, q.Limit), Limit: q.Limit, Cursor: q.Cursor, Companion: l.Companion})
	if err != nil {
		return nil, err
	}
	out, err := page[T](pg, q.Limit)
	if err != nil || out.Total >= 0 {
		return out, err
	}
	if q.Uncounted {
		out.Total = lowerBound(pg)
		return out, nil
	}
	out.Total = 0
	if l.Self {
		out.Total = len(orgs)
		return out, nil
	}
	if every && l.Counter != nil {
		for i := range orgs {
			out.Total += l.Counter(&orgs[i])
		}
		return out, nil
	}
	for _, qu := range queries {
		n, err := l.St.Count(ctx, qu, keep)
		if err != nil {
			return nil, err
		}
		out.Total += n
	}
	return out, nil
}

// partitions are the index queries of a list partition pk, split by parts
// (ListQuery.Parts) when there are any.
func (l Listing[T]) partitions(index, pk string, parts []string) []store.Query {
	if len(parts) == 0 {
		return []store.Query{{Index: index, PK: pk, Descending: l.Descending}}
	}
	out := make([]store.Query, 0, len(parts))
	for _, part := range parts {
		out = append(out, store.Query{Index: index, PK: pk + "#" + part, Descending: l.Descending})
	}
	return out
}

// lowerBound is an uncounted list's total when the read did not reach the
// end: the rows up to the end of the page, and one more when a next page
// exists (exact on the last page read by cursor).
func lowerBound(pg store.WindowPage) int {
	n := pg.Offset + len(pg.Items)
	if pg.Next != "" {
		n++
	}
	return n
}

// liveOnly keeps the index rows keep keeps whose organization is one of orgs:
// a partition that spans organizations (a partner's, or the merge of every
// partner's) still holds the rows of organizations deleted since.
func liveOnly(orgs []Organization, keep func(store.Item) bool) func(store.Item) bool {
	live := make(map[string]bool, len(orgs))
	for _, o := range orgs {
		live[o.ID] = true
	}
	return func(it store.Item) bool { return live[store.Str(it["orgId"])] && keep(it) }
}

// count counts a partition's rows: all of them by Select COUNT when every,
// else the rows keep keeps.
func (l Listing[T]) count(ctx context.Context, q store.Query, every bool, keep func(store.Item) bool) (int, error) {
	if every {
		keep = nil
	}
	return l.St.Count(ctx, q, keep)
}

// page decodes a page read from the list indexes.
func page[T any](pg store.WindowPage, limit int) (*Page[T], error) {
	items := []T{}
	if err := attributevalue.UnmarshalListOfMaps(pg.Items, &items); err != nil {
		return nil, err
	}
	return &Page[T]{Items: items, Page: pg.Offset/limit + 1, Limit: limit, Total: pg.Total, Next: pg.Next}, nil
}

// Collect reads the rows of each organization of orgIDs with read, one
// organization after another, and keeps those keep keeps (nil keeps all). It
// is the in-memory loop of the reads that want every row (filter previews,
// search) and of the lists no list index serves yet (enrollment keys, API
// keys, service principals, saved filters, scripts): it reads every row of
// every organization, so the caller sorts and slices. Lists the list indexes
// hold read one page instead (List).
func Collect[T any](ctx context.Context, orgIDs []string, read func(ctx context.Context, orgID string) ([]T, error), keep func(*T) bool) ([]T, error) {
	out := []T{}
	for _, id := range orgIDs {
		rows, err := read(ctx, id)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			if keep == nil || keep(&rows[i]) {
				out = append(out, rows[i])
			}
		}
	}
	return out, nil
}
