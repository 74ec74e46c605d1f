// Package backfill gives the rows written before their list had a list index
// (GSI3/GSI4, shared/store) the index keys their domain's writes set today, so
// the lists that read one page (tenant.List) find them: devices, alerts,
// scripts, saved filters, API keys, service principals, enrollment keys,
// elevation requests, webhooks, SSO providers, organizations, sites and device
// groups.
// New rows get their keys when they are written; this is for the rows of a
// table that predates the indexes, run once after the deployment that adds
// the indexes and the code that writes their keys (infra/cdk/README.md).
//
// Job is the sweeper's list-index-backfill job (invoked by hand, not on a
// schedule). Each invocation scans from where the last one stopped (the
// progress row BACKFILL / LISTINDEX holds the scan cursor) until the scan
// reaches the table's end or the invocation's time runs short; then the
// progress row is deleted. It is idempotent (store.Backfill writes a row only
// while it has no GSI4PK, or for an API key no GSI2PK, its creator's index): a
// second complete run writes nothing, and runs that overlap write each row
// once.
//
// Totals need no backfill: the device list's counter (the organization's
// deviceCount) predates the list indexes, and the other lists count their
// index partition (store.Count) when a page stops before the end.
//
// A list given an index later adds its kind to Kinds, computed by its
// domain's own key function.
package backfill

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gale-rmm/gale/shared/alert"
	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/enrollment"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/principal"
	"github.com/gale-rmm/gale/shared/savedfilter"
	"github.com/gale-rmm/gale/shared/script"
	"github.com/gale-rmm/gale/shared/sso/ssolist"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/webhook"
)

// Kinds are the rows the backfill gives list keys, each computed by its
// domain's own key function.
func Kinds() []store.Reindex {
	ks := []store.Reindex{
		device.Reindex(),
		{Kind: "alert", SKPrefix: "ALERT#", Keys: alertKeys},
		{Kind: "script", SKPrefix: "SCRIPT#", From: []string{"name"}, Keys: scriptKeys},
		{Kind: "saved filter", SKPrefix: "FILTER#", Keys: filterKeys},
		enrollment.Reindex(),
		pam.Reindex(),
		webhook.Reindex(),
		ssolist.Reindex(),
	}
	ks = append(ks, tenant.Reindex()...)
	ks = append(ks, apikey.Reindex()...)
	return append(ks, principal.Reindex()...)
}

func alertKeys(it store.Item) (store.Keys, error) {
	var a alert.Alert
	err := store.Unmarshal(it, &a)
	alert.SetListKeys(&a)
	return a.Keys, err
}

func scriptKeys(it store.Item) (store.Keys, error) {
	var sc script.Script
	err := store.Unmarshal(it, &sc)
	script.SetListKeys(&sc)
	return sc.Keys, err
}

func filterKeys(it store.Item) (store.Keys, error) {
	var f savedfilter.Filter
	err := store.Unmarshal(it, &f)
	savedfilter.SetListKeys(&f)
	return f.Keys, err
}

// progress is the row that holds where an unfinished backfill resumes.
type progress struct {
	store.Keys
	Cursor    string `dynamodbav:"cursor"`
	UpdatedAt string `dynamodbav:"updatedAt"`
}

var progressKey = store.KeyRef{PK: "BACKFILL", SK: "LISTINDEX"}

// Job runs the backfill in bounded steps.
type Job struct {
	St    *store.Store
	Clock clock.Clock
	Log   *slog.Logger
	// Reserve is the time an invocation keeps for itself before its deadline
	// (default 30 s): no scan page starts later.
	Reserve time.Duration
	// Kinds defaults to Kinds().
	Kinds []store.Reindex
}

// Run scans one scan page after another from the saved cursor until the
// table's end or its deadline less Reserve, saving the cursor after each page;
// it returns the number of rows it gave list keys.
func (j Job) Run(ctx context.Context) (int, error) {
	kinds := j.Kinds
	if kinds == nil {
		kinds = Kinds()
	}
	reserve := j.Reserve
	if reserve == 0 {
		reserve = 30 * time.Second
	}
	var p progress
	if err := j.St.Get(ctx, progressKey.PK, progressKey.SK, &p); err != nil && !errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("list index backfill: %w", err)
	}
	cursor, written, scanned := p.Cursor, 0, 0
	byKind := map[string]int{}
	for {
		run, err := j.St.Backfill(ctx, kinds, cursor, 1)
		scanned += run.Scanned
		for k, n := range run.Written {
			written += n
			byKind[k] += n
		}
		if err != nil {
			return written, err
		}
		if cursor = run.Next; cursor == "" {
			break
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < reserve {
			p := progress{Keys: store.Keys{PK: progressKey.PK, SK: progressKey.SK}, Cursor: cursor, UpdatedAt: clock.Format(j.Clock.Now())}
			if err := j.St.Do(ctx, store.Put(&p)); err != nil {
				return written, fmt.Errorf("list index backfill: save progress: %w", err)
			}
			j.log(ctx, "list index backfill paused: invoke again to resume", scanned, byKind)
			return written, nil
		}
	}
	if err := j.St.Do(ctx, store.Delete(progressKey.PK, progressKey.SK)); err != nil {
		return written, fmt.Errorf("list index backfill: clear progress: %w", err)
	}
	j.log(ctx, "list index backfill complete", scanned, byKind)
	return written, nil
}

func (j Job) log(ctx context.Context, msg string, scanned int, byKind map[string]int) {
	if j.Log != nil {
		j.Log.InfoContext(ctx, msg, "scanned", scanned, "written", byKind)
	}
}
