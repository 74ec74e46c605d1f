package alert

import (
	"context"
	"fmt"

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

// List index keys: createdAt, then the id complemented, read in descending
// order: newest first, ties by id ascending.

// PartnerListPK is the GSI3 partition of the alerts of partner partnerID.
func PartnerListPK(partnerID string) string { return store.PartnerPK(partnerID) + "#ALERTS" }

// OrgListPK is the GSI4 partition of the alerts of organization orgID.
func OrgListPK(orgID string) string { return store.OrgPK(orgID) + "#ALERTS" }

// SetListKeys puts a into the list indexes.
func SetListKeys(a *Alert) {
	a.SetList(PartnerListPK, OrgListPK, a.PartnerID, a.OrgID, store.NewestSK(a.CreatedAt, a.ID))
}

func createWrite(a *Alert) *store.Write {
	SetListKeys(a)
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
