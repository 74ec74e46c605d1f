package testenv

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gale-rmm/gale/shared/store"
)

// Seeder puts rows straight into the table with BatchWriteItem, 25 at a time
// (unprocessed ones again): test setup of thousands of rows in seconds,
// keyed as the package under test keys its own writes.
type Seeder struct {
	t     testing.TB
	env   *Env
	batch []types.WriteRequest
}

// Seeder returns a seeder of e's table; Flush it after the last Put.
func (e *Env) Seeder(t testing.TB) *Seeder { return &Seeder{t: t, env: e} }

// Put adds item, writing a batch when 25 are waiting.
func (s *Seeder) Put(item store.Item) {
	s.batch = append(s.batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	if len(s.batch) == 25 {
		s.Flush()
	}
}

// Flush writes what waits.
func (s *Seeder) Flush() {
	s.t.Helper()
	table := s.env.Store.Table
	for len(s.batch) > 0 {
		out, err := s.env.Store.DB.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: s.batch}})
		if err != nil {
			s.t.Fatal(err)
		}
		s.batch = out.UnprocessedItems[table]
	}
}
