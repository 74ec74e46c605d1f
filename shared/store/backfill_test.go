package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gale-rmm/gale/shared/store"
)

// TestBackfillResumesAndRacesSafely backfills rows page by page through its
// cursor, while one row changes and one is deleted under it: the changed row
// gets the keys of its new value, the deleted one is not brought back, rows of
// other kinds, outside organization partitions or already indexed are left
// alone, and a second run writes nothing.
func TestBackfillResumesAndRacesSafely(t *testing.T) {
	st, _ := newStore(t)
	ctx := context.Background()
	defer store.SetBackfillScanLimit(2)()
	for i := range 7 {
		if err := st.Do(ctx, store.PutNew(rec(store.OrgPK("o1"), fmt.Sprintf("THING#%d", i), fmt.Sprintf("n%d", i)))); err != nil {
			t.Fatal(err)
		}
	}
	done := rec(store.OrgPK("o1"), "THING#done", "kept")
	done.GSI4PK, done.GSI4SK = "ORG#o1#THINGS", "as it was"
	for _, r := range []thing{rec(store.OrgPK("o1"), "OTHER#1", "x"), rec("USER#u", "THING#1", "x"), done} {
		if err := st.Do(ctx, store.PutNew(r)); err != nil {
			t.Fatal(err)
		}
	}
	raced := map[string]bool{}
	kind := store.Reindex{Kind: "thing", SKPrefix: "THING#", From: []string{"name"}, Keys: func(it store.Item) (store.Keys, error) {
		sk, name := store.Str(it["SK"]), store.Str(it["name"])
		if !raced[sk] {
			raced[sk] = true
			switch sk {
			case "THING#3": // renamed between the scan and the write
				if err := st.Do(ctx, store.Set(store.OrgPK("o1"), sk, "name", "renamed")); err != nil {
					return store.Keys{}, err
				}
			case "THING#5": // deleted between the scan and the write
				if err := st.Do(ctx, store.Delete(store.OrgPK("o1"), sk)); err != nil {
					return store.Keys{}, err
				}
			}
		}
		return store.Keys{GSI4PK: "ORG#o1#THINGS", GSI4SK: name}, nil
	}}
	written, steps, cursor := 0, 0, ""
	for {
		run, err := st.Backfill(ctx, []store.Reindex{kind}, cursor, 1)
		if err != nil {
			t.Fatal(err)
		}
		written += run.Written["thing"]
		steps++
		if cursor = run.Next; cursor == "" {
			break
		}
	}
	if written != 6 || steps < 3 {
		t.Fatalf("wrote %d rows in %d steps, want 6 in several", written, steps)
	}
	for i := range 7 {
		var got thing
		err := st.Get(ctx, store.OrgPK("o1"), fmt.Sprintf("THING#%d", i), &got)
		switch {
		case i == 5:
			if err == nil {
				t.Fatalf("the deleted row is back: %+v", got)
			}
		case err != nil:
			t.Fatal(err)
		case i == 3 && got.GSI4SK != "renamed", i != 3 && got.GSI4SK != fmt.Sprintf("n%d", i), got.GSI4PK != "ORG#o1#THINGS":
			t.Fatalf("row %d: %+v", i, got)
		}
	}
	for _, r := range []thing{rec(store.OrgPK("o1"), "OTHER#1", ""), rec("USER#u", "THING#1", ""), done} {
		var got thing
		if err := st.Get(ctx, r.PK, r.SK, &got); err != nil {
			t.Fatal(err)
		}
		if got.GSI4PK != r.GSI4PK || got.GSI4SK != r.GSI4SK {
			t.Fatalf("%s/%s was changed: %+v", r.PK, r.SK, got)
		}
	}
	again, err := st.Backfill(ctx, []store.Reindex{kind}, "", 100)
	if err != nil || len(again.Written) != 0 || again.Next != "" {
		t.Fatalf("second run: %+v (%v)", again, err)
	}
	if _, err := st.Backfill(ctx, []store.Reindex{kind}, "not a cursor", 1); err == nil {
		t.Fatal("a forged cursor was accepted")
	}
}
