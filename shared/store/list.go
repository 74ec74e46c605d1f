package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
	// Companion, when set, names each item's companion row (Companion).
	Companion Companion
}

// Companion names the row kept beside an item for its often-written part
// (shared/device's live row): a list page reads it with its item in the same
// BatchGetItem and lays it over the item (Overlay). A missing companion
// leaves the item as stored.
type Companion func(KeyRef) KeyRef

// Overlay lays companion row over item: every attribute of over but its keys
// replaces item's.
func Overlay(item, over Item) {
	for k, v := range over {
		if k != "PK" && k != "SK" {
			item[k] = v
		}
	}
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
	if out.Items, err = s.items(ctx, rows, w.Companion); err != nil {
		return WindowPage{}, fmt.Errorf("store: window %s: %w", w.Query.PK, err)
	}
	return out, nil
}

// items reads the table items of index rows, in their order, with their
// companions when comp is set (one BatchGetItem per 100 keys; none for no
// rows), eventually consistent: the rows come from an index, itself
// eventually consistent, and a page is a view (its items are never the base
// of a write).
func (s *Store) items(ctx context.Context, rows []Item, comp Companion) ([]Item, error) {
	if len(rows) == 0 {
		return []Item{}, nil
	}
	refs := make([]KeyRef, 0, 2*len(rows))
	for _, r := range rows {
		refs = append(refs, KeyRef{PK: str(r["PK"]), SK: str(r["SK"])})
	}
	n := len(refs)
	if comp != nil {
		for _, r := range refs[:n] {
			refs = append(refs, comp(r))
		}
	}
	got, err := s.BatchGetWith(ctx, Eventual, refs...)
	if err != nil {
		return nil, err
	}
	out := make([]Item, 0, n)
	for i, r := range refs[:n] {
		it, ok := got[r.PK+"|"+r.SK]
		if !ok {
			continue
		}
		if comp != nil {
			if c, ok := got[refs[n+i].PK+"|"+refs[n+i].SK]; ok {
				Overlay(it, c)
			}
		}
		out = append(out, it)
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

// Merge is one page of a list whose rows lie in several list index
// partitions (a system caller's list: one GSI3 partition per partner, one GSI4
// partition per organization without a partner): the partitions are read in
// the list's order side by side and merged (k-way) by sort key, so the sort
// keys must be unique and comparable across the partitions (Gale's list keys
// end with the row's id), and every query must have the same Descending.
// Each partition is read only as far as the page needs (the first call asks
// each for the rows the page still needs, later calls refill a partition whose
// rows ran out), then the page's items are read in one BatchGetItem.
//
// Name ties a cursor to its list. A cursor holds the last sort key of its
// page: every partition then starts after it (a key condition, not a start
// key), so a deep page by cursor costs what page 1 costs.
type Merge struct {
	Name      string
	Queries   []Query
	Keep      func(Item) bool
	Offset    int
	Limit     int
	Cursor    string
	Companion Companion
}

// mergeCursor is the cursor of a Merge page.
type mergeCursor struct {
	List   string `json:"l"`
	After  string `json:"a"`
	Offset int    `json:"o"`
}

// mergePart is one partition of a merge and the rows read from it not yet merged.
type mergePart struct {
	in    *dynamodb.QueryInput
	sk    string
	rows  []Item
	ended bool
}

// Merge reads page m (see Merge).
func (s *Store) Merge(ctx context.Context, m Merge) (WindowPage, error) {
	if m.Name == "" || m.Limit < 1 {
		return WindowPage{}, fmt.Errorf("store: merge: a name and a limit are required")
	}
	skip := min(max(m.Offset, 0), MaxOffset)
	out := WindowPage{Offset: skip, Total: -1}
	after := ""
	if m.Cursor != "" {
		c, err := decodeMergeCursor(m.Cursor, m.Name)
		if err != nil {
			return WindowPage{}, err
		}
		after, out.Offset, skip = c.After, c.Offset, 0
	}
	parts, desc, err := s.mergeParts(m, after)
	if err != nil {
		return WindowPage{}, err
	}
	w := &merger{s: s, m: m, desc: desc, skip: skip}
	ended, err := w.collect(ctx, parts)
	if err != nil {
		return WindowPage{}, err
	}
	rows := w.rows
	if len(rows) > m.Limit {
		rows = rows[:m.Limit]
		if out.Next, err = encodeMergeCursor(mergeCursor{List: m.Name, After: w.lastSK, Offset: out.Offset + m.Limit}); err != nil {
			return WindowPage{}, err
		}
	}
	if ended && m.Cursor == "" {
		out.Total = w.skipped + len(rows)
	}
	if out.Items, err = s.items(ctx, rows, m.Companion); err != nil {
		return WindowPage{}, fmt.Errorf("store: merge %s: %w", m.Name, err)
	}
	return out, nil
}

// mergeParts builds one Query per partition of m, each starting after the
// cursor's sort key when there is one; the queries must share one order,
// which it returns (true: descending).
func (s *Store) mergeParts(m Merge, after string) ([]*mergePart, bool, error) {
	desc := len(m.Queries) > 0 && m.Queries[0].Descending
	parts := make([]*mergePart, 0, len(m.Queries))
	for _, q := range m.Queries {
		if q.Index == "" || q.Descending != desc {
			return nil, false, fmt.Errorf("store: merge %s: index queries of one order are required", m.Name)
		}
		in, err := s.input(q)
		if err != nil {
			return nil, false, err
		}
		if after != "" {
			op := " > "
			if desc {
				op = " < "
			}
			if in.ExpressionAttributeNames["#sk"] == "" {
				in.ExpressionAttributeNames["#sk"] = q.Index + "SK"
			}
			in.ExpressionAttributeValues[":after"] = &types.AttributeValueMemberS{Value: after}
			in.KeyConditionExpression = aws.String(*in.KeyConditionExpression + " AND #sk" + op + ":after")
		}
		parts = append(parts, &mergePart{in: in, sk: q.Index + "SK"})
	}
	return parts, desc, nil
}

// merger walks the heads of a merge's partitions in sort-key order, skipping
// the page's offset and dropping expired rows and rows Keep refuses, until it
// holds the page and one row more (which says a next page exists).
type merger struct {
	s       *Store
	m       Merge
	desc    bool
	skip    int
	skipped int
	// dropped is set once a row was refused: later reads ask for more rows,
	// since the partitions hold rows the page will not show.
	dropped bool
	rows    []Item
	// lastSK is the sort key of the page's last row, where the next page starts.
	lastSK string
}

// collect reads rows until the page and one more are held or every partition
// ended (then it answers true).
func (w *merger) collect(ctx context.Context, parts []*mergePart) (bool, error) {
	for len(w.rows) <= w.m.Limit {
		next, err := w.head(ctx, parts)
		if err != nil {
			return false, err
		}
		if next == nil {
			return true, nil
		}
		it := next.rows[0]
		next.rows = next.rows[1:]
		w.take(it, next.sk)
	}
	return false, nil
}

// head answers the partition whose next row comes first in the merge's order,
// reading from each partition whose read rows are used up; nil when every
// partition ended.
func (w *merger) head(ctx context.Context, parts []*mergePart) (*mergePart, error) {
	var next *mergePart
	for _, p := range parts {
		for len(p.rows) == 0 && !p.ended {
			if err := w.fill(ctx, p); err != nil {
				return nil, err
			}
		}
		if len(p.rows) == 0 {
			continue
		}
		if next == nil {
			next = p
			continue
		}
		c := strings.Compare(str(p.rows[0][p.sk]), str(next.rows[0][next.sk]))
		if (c < 0 && !w.desc) || (c > 0 && w.desc) {
			next = p
		}
	}
	return next, nil
}

// take drops, skips or keeps one row in merge order.
func (w *merger) take(it Item, sk string) {
	if w.s.expired(it) || (w.m.Keep != nil && !w.m.Keep(it)) {
		w.dropped = true
		return
	}
	if w.skipped < w.skip {
		w.skipped++
		return
	}
	if len(w.rows) < w.m.Limit {
		w.lastSK = str(it[sk])
	}
	w.rows = append(w.rows, it)
}

// fill reads p's next rows, asking for what the page still needs (more once
// rows were dropped, as more may be).
func (w *merger) fill(ctx context.Context, p *mergePart) error {
	need := (w.skip - w.skipped) + (w.m.Limit + 1 - len(w.rows))
	if w.dropped {
		need = max(need*4, 256)
	}
	p.in.Limit = aws.Int32(int32(min(max(need, 1), math.MaxInt32)))
	res, err := w.s.DB.Query(ctx, p.in)
	if err != nil {
		return fmt.Errorf("store: merge %s: %w", w.m.Name, err)
	}
	p.rows = res.Items
	if len(res.LastEvaluatedKey) == 0 {
		p.ended = true
	} else {
		p.in.ExclusiveStartKey = res.LastEvaluatedKey
	}
	return nil
}

func encodeMergeCursor(c mergeCursor) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("store: cursor: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// decodeMergeCursor reads a Merge cursor of list name; anything else is
// ErrBadCursor (the cursor is not signed: its key only bounds key conditions).
func decodeMergeCursor(s, name string) (mergeCursor, error) {
	var c mergeCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.List != name || c.After == "" || c.Offset < 0 {
		return mergeCursor{}, ErrBadCursor
	}
	return c, nil
}

// NewestSK is a list sort key that, read in descending order (Query
// Descending), lists rows newest first by at (a fixed-width UTC time), ties by
// id ascending: the id (a UUID: '-', digits, lower-case letters) is stored
// complemented.
func NewestSK(at, id string) string {
	var c strings.Builder
	c.Grow(len(at) + 1 + len(id))
	c.WriteString(at)
	c.WriteByte('#')
	for _, b := range []byte(id) {
		c.WriteByte('~' - (b - '-')) // '-'..'f' -> '~'..'E'
	}
	return c.String()
}
