package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Reindex is one kind of organization-owned row (PK ORG#<oid>, SK
// <SKPrefix>...) for Backfill: how it gets its list-index keys. A kind of one
// sort key (an organization's own row, ORG) names it whole as SKPrefix and
// refuses longer ones with Except.
type Reindex struct {
	// Kind names the rows in BackfillRun.Written ("device").
	Kind     string
	SKPrefix string
	// Keys are the row's list-index keys computed from the whole item, as the
	// domain's own writes set them (GSI4PK/GSI4SK, GSI3PK/GSI3SK when the row
	// has a partner); a zero GSI4PK leaves the row as it is.
	Keys func(Item) (Keys, error)
	// From names the attributes Keys reads that a write may change (a device's
	// hostname): the backfill writes only while they hold what it read.
	From []string
	// Creator is set when every row of the kind also sits in GSI2 (an API
	// key in its creator's partition): a row without GSI2PK is backfilled too,
	// even one that has its list-index keys.
	Creator bool
	// Except, when set, tells the rows under SKPrefix that are not of the
	// kind (a device's live row, DEVICE#<id>#live): they are never given keys.
	Except func(sk string) bool
	// Partners tells that rows of the kind also live in partner partitions
	// (an SSO provider of a partner's own members): the scan matches them
	// there too.
	Partners bool
}

// where is the scan's condition for the rows of kind k still to backfill.
func (k *Reindex) where() expression.ConditionBuilder {
	in := expression.Name("PK").BeginsWith(orgPrefix)
	if k.Partners {
		in = in.Or(expression.Name("PK").BeginsWith(partnerPrefix))
	}
	return in.And(expression.Name("SK").BeginsWith(k.SKPrefix), k.missing())
}

// Holds reports whether sort key sk names a row of kind k.
func (k *Reindex) Holds(sk string) bool {
	return len(sk) >= len(k.SKPrefix) && sk[:len(k.SKPrefix)] == k.SKPrefix && (k.Except == nil || !k.Except(sk))
}

// missing is the condition "the row lacks an index key k sets".
func (k *Reindex) missing() expression.ConditionBuilder {
	c := expression.Name("GSI4PK").AttributeNotExists()
	if k.Creator {
		c = c.Or(expression.Name("GSI2PK").AttributeNotExists())
	}
	return c
}

// indexed reports whether row it has every index key k sets.
func (k *Reindex) indexed(it Item) bool {
	return it["GSI4PK"] != nil && (!k.Creator || it["GSI2PK"] != nil)
}

// BackfillRun is what one Backfill call did.
type BackfillRun struct {
	// Scanned is the number of items the scan read.
	Scanned int
	// Written counts, by kind, the rows given their list-index keys.
	Written map[string]int
	// Next is where the following call resumes; "" once the scan reached the
	// table's end.
	Next string
}

// backfillScanLimit, when set, bounds the items a scan page reads (tests of
// resumption on a small table).
var backfillScanLimit int32

// backfillTries bounds the attempts on one row that keeps changing under the
// backfill (each attempt re-reads it).
const backfillTries = 3

// Backfill gives the rows of kinds that have no list-index keys (written
// before their list had an index) the keys their domain writes today. It scans
// the table from cursor ("" is the start) for at most pages scan pages (1 MB
// each), filtered to organization rows (and partner rows of a Partners kind)
// of those kinds without GSI4PK (or
// GSI2PK, for Creator kinds), and sets each row's keys with one UpdateItem
// under the condition that the row still exists, still lacks one of them and
// still holds the From values it was computed from (a row that changed
// meanwhile is re-read and tried again). It is
// idempotent: a row once written is not matched again, so a second run over
// the table writes nothing, and a run stopped anywhere resumes from its Next.
func (s *Store) Backfill(ctx context.Context, kinds []Reindex, cursor string, pages int) (BackfillRun, error) {
	run := BackfillRun{Written: map[string]int{}}
	if len(kinds) == 0 || pages < 1 {
		return run, nil
	}
	start, err := decodeScanCursor(cursor)
	if err != nil {
		return run, err
	}
	filter := kinds[0].where()
	for _, k := range kinds[1:] {
		filter = filter.Or(k.where())
	}
	ex, err := expression.NewBuilder().WithFilter(filter).Build()
	if err != nil {
		return run, fmt.Errorf("store: backfill filter: %w", err)
	}
	in := &dynamodb.ScanInput{TableName: &s.Table, FilterExpression: ex.Filter(),
		ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values(),
		ExclusiveStartKey: start, ConsistentRead: aws.Bool(true)}
	if backfillScanLimit > 0 {
		in.Limit = aws.Int32(backfillScanLimit)
	}
	for range pages {
		res, err := s.DB.Scan(ctx, in)
		if err != nil {
			return run, fmt.Errorf("store: backfill scan: %w", err)
		}
		run.Scanned += int(res.ScannedCount)
		for _, it := range res.Items {
			k := kindOf(kinds, str(it["SK"]))
			if k == nil {
				continue
			}
			done, err := s.reindex(ctx, k, it)
			if err != nil {
				return run, err
			}
			if done {
				run.Written[k.Kind]++
			}
		}
		if len(res.LastEvaluatedKey) == 0 {
			run.Next = ""
			return run, nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
		if run.Next, err = encodeScanCursor(res.LastEvaluatedKey); err != nil {
			return run, err
		}
	}
	return run, nil
}

func kindOf(kinds []Reindex, sk string) *Reindex {
	for i := range kinds {
		if kinds[i].Holds(sk) {
			return &kinds[i]
		}
	}
	return nil
}

// reindex writes row it's list keys; false when the row needs none (gone,
// indexed meanwhile, or not listed).
func (s *Store) reindex(ctx context.Context, k *Reindex, it Item) (bool, error) {
	pk, sk := str(it["PK"]), str(it["SK"])
	for range backfillTries {
		keys, err := k.Keys(it)
		if err != nil {
			return false, fmt.Errorf("store: backfill %s/%s: %w", pk, sk, err)
		}
		if keys.GSI4PK == "" || it["GSI4PK"] != nil && (!k.Creator || keys.GSI2PK == "" || it["GSI2PK"] != nil) {
			return false, nil // nothing to add
		}
		upd := expression.Set(expression.Name("GSI4PK"), expression.Value(keys.GSI4PK)).
			Set(expression.Name("GSI4SK"), expression.Value(keys.GSI4SK))
		if keys.GSI3PK != "" {
			upd = upd.Set(expression.Name("GSI3PK"), expression.Value(keys.GSI3PK)).
				Set(expression.Name("GSI3SK"), expression.Value(keys.GSI3SK))
		}
		if k.Creator && keys.GSI2PK != "" {
			upd = upd.Set(expression.Name("GSI2PK"), expression.Value(keys.GSI2PK)).
				Set(expression.Name("GSI2SK"), expression.Value(keys.GSI2SK))
		}
		cond := Present().And(k.missing())
		for _, a := range k.From {
			if v, ok := it[a]; ok {
				cond = cond.And(expression.Name(a).Equal(expression.Value(v)))
			} else {
				cond = cond.And(expression.Name(a).AttributeNotExists())
			}
		}
		err = s.Do(ctx, Change(pk, sk, upd).When(cond))
		if !errors.Is(err, ErrConditionFailed) {
			return err == nil, err
		}
		// Changed since the scan: read it again.
		res, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Table, Key: Key(pk, sk), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return false, fmt.Errorf("store: backfill %s/%s: %w", pk, sk, err)
		}
		if res.Item == nil || k.indexed(res.Item) {
			return false, nil
		}
		it = res.Item
	}
	return false, fmt.Errorf("store: backfill %s/%s: the row kept changing; run again", pk, sk)
}

func encodeScanCursor(key Item) (string, error) {
	m := map[string]string{}
	for k, v := range key {
		sv, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			return "", fmt.Errorf("store: backfill cursor: key %s is not a string", k)
		}
		m[k] = sv.Value
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func decodeScanCursor(c string) (Item, error) {
	if c == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	var m map[string]string
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil || m["PK"] == "" || m["SK"] == "" {
		return nil, fmt.Errorf("store: backfill cursor %q is not one Backfill gave", c)
	}
	out := Item{}
	for k, v := range m {
		out[k] = &types.AttributeValueMemberS{Value: v}
	}
	return out, nil
}
