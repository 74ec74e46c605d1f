package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
)

// Put stamps e with an id and time and returns the write to add to the change's transaction.
func Put(clk clock.Clock, e Entry) *store.Write {
	return store.PutNew(stamp(clk.Now(), e))
}

// Log writes a record on its own, for events that change nothing else (a denied
// attempt, a login). Changes use Put inside their transaction instead.
func Log(ctx context.Context, st *store.Store, e Entry) error {
	if err := st.Do(ctx, Put(st.Clock, e)); err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// List returns up to limit records of a tenant, newest first.
func List(ctx context.Context, st *store.Store, tenant string, limit int32) ([]Record, error) {
	res, err := st.Page(ctx, store.Query{PK: "AUDIT#" + tenant, Descending: true, Limit: limit}, "")
	if err != nil {
		return nil, fmt.Errorf("audit list %s: %w", tenant, err)
	}
	out := make([]Record, 0, len(res.Items))
	for _, it := range res.Items {
		var r Record
		if err := store.Unmarshal(it, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Filter narrows a read of one tenant's log. From and To (zero: open) bound
// the sort key; the others are tested by a filter expression on the rows read.
type Filter struct {
	ActorID      string
	Action       string // exact, or a prefix when it ends in "*"
	ResourceType string
	ResourceID   string
	From, To     time.Time
}

// query is the read of f in tenant's partition, newest first, reading at most
// limit rows (a filter expression drops rows after the read, so a filtered
// page may hold fewer than limit with a cursor to the next).
func (f Filter) query(tenant string, limit int32) store.Query {
	q := store.Query{PK: "AUDIT#" + tenant, Descending: true, Limit: limit}
	if !f.From.IsZero() {
		q.SKFrom = clock.Format(f.From)
	}
	if !f.To.IsZero() {
		// Every row of the last millisecond: its id follows the time.
		q.SKTo = clock.Format(f.To) + "#~"
	}
	var conds []expression.ConditionBuilder
	for _, c := range [][2]string{{"actorId", f.ActorID}, {"resourceType", f.ResourceType}, {"resourceId", f.ResourceID}} {
		if c[1] != "" {
			conds = append(conds, store.Is(c[0], c[1]))
		}
	}
	switch a, prefix := strings.CutSuffix(f.Action, "*"); {
	case prefix && a != "":
		conds = append(conds, expression.Name("action").BeginsWith(a))
	case !prefix && a != "":
		conds = append(conds, store.Is("action", a))
	}
	if len(conds) > 0 {
		where := conds[0]
		if len(conds) > 1 {
			where = expression.And(conds[0], conds[1], conds[2:]...)
		}
		q.Where = &where
	}
	return q
}

// Read returns one page of tenant's log matching f, newest first, from cursor
// (a Next of the same tenant's read; another tenant's is store.ErrBadCursor):
// the rows of at most limit rows read, and the cursor after them ("" at the
// end). Its cost is that of limit rows whatever the log's size.
func Read(ctx context.Context, st *store.Store, tenant string, f Filter, limit int32, cursor string) ([]Record, string, error) {
	res, err := st.Page(ctx, f.query(tenant, limit), cursor)
	if err != nil {
		return nil, "", err
	}
	out := make([]Record, 0, len(res.Items))
	for _, it := range res.Items {
		var r Record
		if err := store.Unmarshal(it, &r); err != nil {
			return nil, "", err
		}
		out = append(out, r)
	}
	return out, res.Next, nil
}
