package alert

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// rows is the organization-owned row repository of alerts (store.OrgRows).
func (s Store) rows() store.OrgRows[Alert] { return store.OrgRows[Alert]{St: s.St, Kind: "ALERT"} }

// Get reads alert id of organization orgID.
func (s Store) Get(ctx context.Context, orgID, id string) (*Alert, error) {
	return s.rows().Get(ctx, orgID, id)
}

// ByID finds alert id of whatever organization (GSI1).
func (s Store) ByID(ctx context.Context, id string) (*Alert, error) { return s.rows().ByID(ctx, id) }

// OrgAlerts lists the alerts of organization orgID.
func (s Store) OrgAlerts(ctx context.Context, orgID string) ([]Alert, error) {
	out := []Alert{}
	if err := s.St.AllInto(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "ALERT#"}, &out); err != nil {
		return nil, fmt.Errorf("alerts of %s: %w", orgID, err)
	}
	return out, nil
}

// Page reads one page of alerts from a list index partition (store.Window),
// keeping the index rows keep keeps (keep sees orgId, partnerId, siteId,
// groupIds, status, severity, deviceId).
func (s Store) Page(ctx context.Context, w store.Window, keep func(*Alert) bool) (store.WindowPage, []Alert, error) {
	w.Keep = func(it store.Item) bool { return keep(listed(it)) }
	pg, err := s.St.Window(ctx, w)
	if err != nil {
		return pg, nil, fmt.Errorf("alerts of %s: %w", w.Query.PK, err)
	}
	out := []Alert{}
	if err := attributevalue.UnmarshalListOfMaps(pg.Items, &out); err != nil {
		return pg, nil, fmt.Errorf("alerts of %s: %w", w.Query.PK, err)
	}
	return pg, out, nil
}

// Count counts the alerts of a list index partition that keep keeps (all of
// them, by Select COUNT, when keep is nil).
func (s Store) Count(ctx context.Context, q store.Query, keep func(*Alert) bool) (int, error) {
	var k func(store.Item) bool
	if keep != nil {
		k = func(it store.Item) bool { return keep(listed(it)) }
	}
	n, err := s.St.Count(ctx, q, k)
	if err != nil {
		return 0, fmt.Errorf("count alerts of %s: %w", q.PK, err)
	}
	return n, nil
}

// listed is the part of an alert a list index row holds.
func listed(it store.Item) *Alert {
	var a Alert
	_ = attributevalue.UnmarshalMap(it, &a) // projected attributes only
	return &a
}

// List index keys: createdAt, then the id complemented, read in descending
// order: newest first, ties by id ascending.

// PartnerListPK is the GSI3 partition of the alerts of partner partnerID.
func PartnerListPK(partnerID string) string { return store.PartnerPK(partnerID) + "#ALERTS" }

// OrgListPK is the GSI4 partition of the alerts of organization orgID.
func OrgListPK(orgID string) string { return store.OrgPK(orgID) + "#ALERTS" }

// setListKeys puts a into the list indexes.
func setListKeys(a *Alert) {
	var c strings.Builder
	for _, b := range []byte(a.ID) {
		c.WriteByte('~' - (b - '-')) // '-'..'f' -> '~'..'E': descending order sorts ids ascending
	}
	sk := a.CreatedAt + "#" + c.String()
	if a.PartnerID != "" {
		a.GSI3PK, a.GSI3SK = PartnerListPK(a.PartnerID), sk
	}
	a.GSI4PK, a.GSI4SK = OrgListPK(a.OrgID), sk
}

func createWrite(a *Alert) *store.Write {
	setListKeys(a)
	return store.PutNew(a)
}

// moveWrite moves a from one of the statuses from to status to, recording who
// and when under the attributes atAttr and byAttr.
func moveWrite(a *Alert, to, atAttr, byAttr, at, by string, from ...string) *store.Write {
	cond := store.Is("status", from[0])
	for _, f := range from[1:] {
		cond = cond.Or(store.Is("status", f))
	}
	upd := expression.Set(expression.Name("status"), expression.Value(to)).
		Set(expression.Name(atAttr), expression.Value(at)).
		Set(expression.Name(byAttr), expression.Value(by))
	return store.Change(a.PK, a.SK, upd).When(cond)
}
