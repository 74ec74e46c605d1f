package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// GSI5 is the last-seen index of online devices (shared/device): keys only,
// since its keys move on a heartbeat and an index that projected the item
// would copy the whole device on every move.
const GSI5 = "GSI5"

// CreateTable provisions the single table with its GSIs and TTL, idempotently.
// The CDK app declares the same shape for AWS; this is for emulators and tests.
func CreateTable(ctx context.Context, db *dynamodb.Client, table string) error {
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	gsi := func(name string) types.GlobalSecondaryIndex {
		proj := &types.Projection{ProjectionType: types.ProjectionTypeAll}
		if name == GSI3 || name == GSI4 {
			proj = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: ListAttributes}
		}
		if name == GSI5 {
			proj = &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}
		}
		return types.GlobalSecondaryIndex{
			IndexName: aws.String(name),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(name + "PK"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(name + "SK"), KeyType: types.KeyTypeRange},
			},
			Projection: proj,
		}
	}
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(table),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			s("PK"), s("SK"), s("GSI1PK"), s("GSI1SK"), s("GSI2PK"), s("GSI2SK"), s("GSI3PK"), s("GSI3SK"), s("GSI4PK"), s("GSI4SK"), s("GSI5PK"), s("GSI5SK"),
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{gsi(GSI1), gsi(GSI2), gsi(GSI3), gsi(GSI4), gsi(GSI5)},
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("store: create table %s: %w", table, err)
	}
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, 30*time.Second); err != nil {
		return fmt.Errorf("store: wait for table %s: %w", table, err)
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err == nil && ttl.TimeToLiveDescription != nil && ttl.TimeToLiveDescription.TimeToLiveStatus == types.TimeToLiveStatusEnabled {
		return nil
	}
	_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("ttl"), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("store: enable ttl on %s: %w", table, err)
	}
	return nil
}

// Ping checks that the table is reachable (health checks).
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.Table})
	if err != nil {
		return fmt.Errorf("store: describe %s: %w", s.Table, err)
	}
	return nil
}
