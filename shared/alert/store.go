package alert

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// Get reads alert id of organization orgID.
func (s Store) Get(ctx context.Context, orgID, id string) (*Alert, error) {
	var a Alert
	if err := s.St.Get(ctx, store.OrgPK(orgID), "ALERT#"+id, &a); err != nil {
		return nil, fmt.Errorf("get alert %s: %w", id, err)
	}
	return &a, nil
}

// ByID finds alert id of whatever organization (GSI1).
func (s Store) ByID(ctx context.Context, id string) (*Alert, error) {
	var out []Alert
	if err := s.St.AllInto(ctx, store.Query{Index: store.GSI1, PK: "ALERTREF#" + id, SKPrefix: "ALERT"}, &out); err != nil {
		return nil, fmt.Errorf("alert %s: %w", id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("alert %s: %w", id, store.ErrNotFound)
	}
	return &out[0], nil
}

// OrgAlerts lists the alerts of organization orgID.
func (s Store) OrgAlerts(ctx context.Context, orgID string) ([]Alert, error) {
	out := []Alert{}
	if err := s.St.AllInto(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "ALERT#"}, &out); err != nil {
		return nil, fmt.Errorf("alerts of %s: %w", orgID, err)
	}
	return out, nil
}

func createWrite(a *Alert) *store.Write { return store.PutNew(a) }

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
