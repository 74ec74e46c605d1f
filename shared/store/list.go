package store

import (
	"context"
	"fmt"
	"math"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Window is one page of a list read from a list index (GSI3 or GSI4): the
// index partition of Query holds the list's rows in the list's order; Keep
// applies the caller's reach to each row (it sees the keys and ListAttributes
// only; nil keeps every row); the page's items are then read from the table in
// one BatchGetItem. This is the one list loop of Gale: a list never reads a
// row past its page, never an item outside it.
//
// By page number (Offset rows skipped), the index is read from the partition's
// start to the page's end: small rows, thousands a call. By Cursor (the Next of
// the page before), reading starts right after that page, so a deep page costs
// what page 1 costs.
type Window struct {
	Query  Query
	Keep   func(Item) bool
	Offset int
	Limit  int
	Cursor string
}

// WindowPage is what Window read.
type WindowPage struct {
	// Items are the page's table items, in list order.
	Items []Item
	// Offset is the number of rows before the page (the cursor's, when one was given).
	Offset int
	// Next is the cursor of the following page, "" on the last page.
	Next string
	// Total is the number of kept rows when a read by page number reached the
	// partition's end (so no counter needs reading), -1 otherwise.
	Total int
}

// MaxOffset bounds the rows a read by page number skips: a larger page is
// past the end of any list and answers an empty page.
const MaxOffset = 1 << 30

// Offset is the number of rows before page (of limit rows), saturating at
// MaxOffset.
func Offset(page, limit int) int {
	if page-1 > MaxOffset/limit {
		return MaxOffset
	}
	return (page - 1) * limit
}

// Window reads page w (see Window).
func (s *Store) Window(ctx context.Context, w Window) (WindowPage, error) {
	if w.Query.Index == "" || w.Limit < 1 {
		return WindowPage{}, fmt.Errorf("store: window of %s: an index and a limit are required", w.Query.PK)
	}
	in, err := s.input(w.Query)
	if err != nil {
		return WindowPage{}, err
	}
	skip := min(max(w.Offset, 0), MaxOffset)
	out := WindowPage{Offset: skip, Total: -1}
	if w.Cursor != "" {
		start, off, err := decodeCursorAt(w.Cursor, w.Query)
		if err != nil {
			return WindowPage{}, err
		}
		in.ExclusiveStartKey, out.Offset, skip = start, off, 0
	}
	var rows []Item
	skipped, ended := 0, false
	dropped := false
	for len(rows) <= w.Limit {
		// The first call asks for no more rows than the page still needs (kept
		// rows are at most the rows read), so a read that keeps every row stops
		// exactly at its end. When Keep dropped rows, later calls ask for more
		// than that (index rows are small), so a restricted caller's page does
		// not take a round trip per missing row.
		need := (skip - skipped) + (w.Limit + 1 - len(rows))
		if dropped {
			need = max(need*4, 256)
		}
		in.Limit = aws.Int32(int32(min(need, math.MaxInt32)))
		res, err := s.DB.Query(ctx, in)
		if err != nil {
			return WindowPage{}, fmt.Errorf("store: window %s: %w", w.Query.PK, err)
		}
		for _, it := range res.Items {
			if s.expired(it) || (w.Keep != nil && !w.Keep(it)) {
				dropped = true
				continue
			}
			if skipped < skip {
				skipped++
				continue
			}
			if rows = append(rows, it); len(rows) > w.Limit {
				break
			}
		}
		if len(res.LastEvaluatedKey) == 0 {
			ended = true
			break
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
	if len(rows) > w.Limit {
		rows = rows[:w.Limit]
		ended = false
		if out.Next, err = encodeCursorAt(indexKey(rows[len(rows)-1], w.Query.Index), w.Query, out.Offset+w.Limit); err != nil {
			return WindowPage{}, err
		}
	}
	if ended && w.Cursor == "" {
		out.Total = skipped + len(rows)
	}
	if len(rows) == 0 {
		out.Items = []Item{}
		return out, nil
	}
	refs := make([]KeyRef, 0, len(rows))
	for _, r := range rows {
		refs = append(refs, KeyRef{PK: str(r["PK"]), SK: str(r["SK"])})
	}
	got, err := s.BatchGet(ctx, refs...)
	if err != nil {
		return WindowPage{}, fmt.Errorf("store: window %s: %w", w.Query.PK, err)
	}
	out.Items = make([]Item, 0, len(refs))
	for _, r := range refs {
		if it, ok := got[r.PK+"|"+r.SK]; ok {
			out.Items = append(out.Items, it)
		}
	}
	return out, nil
}

// Count counts the rows of q's index partition that keep keeps, reading the
// partition to its end: with Select COUNT when keep is nil, else the rows
// themselves (small: list indexes project ListAttributes only). Lists use it
// for a total no counter holds (a restricted caller's).
func (s *Store) Count(ctx context.Context, q Query, keep func(Item) bool) (int, error) {
	in, err := s.input(q)
	if err != nil {
		return 0, err
	}
	in.Limit = nil
	if keep == nil {
		in.Select = types.SelectCount
	}
	n := 0
	for {
		res, err := s.DB.Query(ctx, in)
		if err != nil {
			return 0, fmt.Errorf("store: count %s: %w", q.PK, err)
		}
		if keep == nil {
			n += int(res.Count)
		}
		for _, it := range res.Items {
			if !s.expired(it) && keep(it) {
				n++
			}
		}
		if len(res.LastEvaluatedKey) == 0 {
			return n, nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// indexKey is the exclusive start key of row in index: the table's key and the index's.
func indexKey(row Item, index string) Item {
	k := Item{}
	for _, a := range []string{"PK", "SK", index + "PK", index + "SK"} {
		if v, ok := row[a]; ok {
			k[a] = v
		}
	}
	return k
}

// Str is a string attribute's value, "" when absent or not a string.
func Str(v types.AttributeValue) string { return str(v) }

func str(v types.AttributeValue) string {
	s, _ := v.(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}
