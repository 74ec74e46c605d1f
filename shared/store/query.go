package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gale-rmm/gale/shared/fault"
)

// Query selects items of one partition (the tenant is part of PK, so a query
// cannot cross tenants), optionally narrowed by a sort-key prefix.
type Query struct {
	Index    string // "" for the table, GSI1 or GSI2
	PK       string
	SKPrefix string
	// SKFrom/SKTo bound the sort key inclusively when set (instead of SKPrefix).
	SKFrom, SKTo string
	// Where filters with a condition builder.
	Where      *expression.ConditionBuilder
	Descending bool
	Limit      int32
}

func (s *Store) input(q Query) (*dynamodb.QueryInput, error) {
	pkName, skName := "PK", "SK"
	if q.Index != "" {
		pkName, skName = q.Index+"PK", q.Index+"SK"
	}
	names := map[string]string{"#pk": pkName}
	vals := map[string]any{":pk": q.PK}
	expr := "#pk = :pk"
	switch {
	case q.SKPrefix != "":
		names["#sk"] = skName
		vals[":skp"] = q.SKPrefix
		expr += " AND begins_with(#sk, :skp)"
	case q.SKFrom != "" && q.SKTo != "":
		names["#sk"] = skName
		vals[":skf"], vals[":skt"] = q.SKFrom, q.SKTo
		expr += " AND #sk BETWEEN :skf AND :skt"
	case q.SKFrom != "":
		names["#sk"] = skName
		vals[":skf"] = q.SKFrom
		expr += " AND #sk >= :skf"
	case q.SKTo != "":
		names["#sk"] = skName
		vals[":skt"] = q.SKTo
		expr += " AND #sk <= :skt"
	}
	av, err := Values(vals)
	if err != nil {
		return nil, fmt.Errorf("store: query values: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName: &s.Table, KeyConditionExpression: &expr,
		ExpressionAttributeNames: names, ExpressionAttributeValues: av,
		ScanIndexForward: aws.Bool(!q.Descending),
	}
	if q.Index != "" {
		in.IndexName = aws.String(q.Index)
	} else {
		in.ConsistentRead = aws.Bool(true)
	}
	if q.Where != nil {
		// The builder names its placeholders #0, :0...; they never meet #pk, :pk.
		ex, err := expression.NewBuilder().WithFilter(*q.Where).Build()
		if err != nil {
			return nil, fmt.Errorf("store: query %s filter: %w", q.PK, err)
		}
		for k, v := range ex.Names() {
			in.ExpressionAttributeNames[k] = v
		}
		for k, v := range ex.Values() {
			in.ExpressionAttributeValues[k] = v
		}
		in.FilterExpression = ex.Filter()
	}
	if q.Limit > 0 {
		in.Limit = aws.Int32(q.Limit)
	}
	return in, nil
}

// All runs q to the end and returns every live (not expired) item. Use it for
// partitions bounded by design (keys of an organization, roles of a partner).
func (s *Store) All(ctx context.Context, q Query) ([]Item, error) {
	in, err := s.input(q)
	if err != nil {
		return nil, err
	}
	in.Limit = nil
	var out []Item
	for {
		res, err := s.DB.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("store: query %s: %w", q.PK, err)
		}
		for _, it := range res.Items {
			if !s.expired(it) {
				out = append(out, it)
			}
		}
		if len(res.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// AllInto runs q to the end and unmarshals the items into out (*[]T).
func (s *Store) AllInto(ctx context.Context, q Query, out any) error {
	items, err := s.All(ctx, q)
	if err != nil {
		return err
	}
	if err := attributevalue.UnmarshalListOfMaps(items, out); err != nil {
		return fmt.Errorf("store: query %s: %w", q.PK, err)
	}
	return nil
}

// PageResult is one page read with a cursor.
type PageResult struct {
	Items []Item
	// Next is an opaque cursor for the following page, "" at the end.
	Next string
}

// Page reads up to q.Limit items starting after cursor. The cursor is bound to
// the query's partition: a cursor of another partition (tenant) is refused.
func (s *Store) Page(ctx context.Context, q Query, cursor string) (PageResult, error) {
	in, err := s.input(q)
	if err != nil {
		return PageResult{}, err
	}
	if cursor != "" {
		start, err := decodeCursor(cursor, q)
		if err != nil {
			return PageResult{}, err
		}
		in.ExclusiveStartKey = start
	}
	res, err := s.DB.Query(ctx, in)
	if err != nil {
		return PageResult{}, fmt.Errorf("store: page %s: %w", q.PK, err)
	}
	out := PageResult{}
	for _, it := range res.Items {
		if !s.expired(it) {
			out.Items = append(out.Items, it)
		}
	}
	if len(res.LastEvaluatedKey) > 0 {
		out.Next, err = encodeCursor(res.LastEvaluatedKey, q)
	}
	return out, err
}

type cursor struct {
	Partition string            `json:"p"`
	Key       map[string]string `json:"k"`
	// Offset is, for Window's cursors, how many rows precede the next page.
	Offset int `json:"o,omitempty"`
}

func encodeCursor(key Item, q Query) (string, error) {
	return encodeCursorAt(key, q, 0)
}

func encodeCursorAt(key Item, q Query, offset int) (string, error) {
	c := cursor{Partition: q.Index + "|" + q.PK, Key: map[string]string{}, Offset: offset}
	for k, v := range key {
		s, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			return "", fmt.Errorf("store: cursor key %s is not a string", k)
		}
		c.Key[k] = s.Value
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("store: cursor: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ErrBadCursor is a 400 naming the cursor parameter.
var ErrBadCursor = fault.Invalid("cursor", "is not a valid cursor for this list")

func decodeCursor(s string, q Query) (Item, error) {
	item, _, err := decodeCursorAt(s, q)
	return item, err
}

func decodeCursorAt(s string, q Query) (Item, int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, 0, ErrBadCursor
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Partition != q.Index+"|"+q.PK || !cursorKeyOK(c.Key, q) || c.Offset < 0 {
		return nil, 0, ErrBadCursor
	}
	item := Item{}
	for k, v := range c.Key {
		item[k] = &types.AttributeValueMemberS{Value: v}
	}
	return item, c.Offset, nil
}

// cursorKeyOK checks a decoded cursor's key against the query: exactly the
// table's key attributes (and the index's, for an index query), in the query's
// partition. The cursor is not signed, so this is what keeps a hand-made one
// from starting outside the partition or reaching DynamoDB as a 500.
func cursorKeyOK(key map[string]string, q Query) bool {
	want := []string{"PK", "SK"}
	pkName := "PK"
	if q.Index != "" {
		pkName = q.Index + "PK"
		want = append(want, pkName, q.Index+"SK")
	}
	if len(key) != len(want) || key[pkName] != q.PK {
		return false
	}
	for _, k := range want {
		if _, ok := key[k]; !ok {
			return false
		}
	}
	return true
}
