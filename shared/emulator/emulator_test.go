package emulator_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gale-rmm/gale/shared/config"
	"github.com/gale-rmm/gale/shared/emulator"
)

func TestStartProvisionStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, awsCfg := start(ctx, t, "test")
	if !m.Atomic {
		t.Error("moto_server runs without the atomic launcher: conditional-write races are not meaningful")
	}
	for range 2 { // idempotent
		res, err := emulator.Provision(ctx, awsCfg, "tprovision")
		if err != nil {
			t.Fatalf("provision: %v", err)
		}
		for _, name := range []string{"events", "webhook-deliveries"} {
			q := res.Queues[name]
			if q.URL == "" || q.ARN == "" || q.DLQURL == "" || q.DLQARN == "" {
				t.Errorf("queue %s = %+v, want queue and DLQ", name, q)
			}
		}
		var c config.Config
		res.Apply(&c)
		ev, dl := res.Queues["events"], res.Queues["webhook-deliveries"]
		if c.Table != "tprovision" || c.EventsQueueURL != ev.URL || c.EventsDLQURL != ev.DLQURL ||
			c.DeliveryQueueURL != dl.URL || c.DeliveryDLQURL != dl.DLQURL {
			t.Errorf("Apply: %+v, want the table and queues of %+v", c, res)
		}
	}
	t.Run("transaction retried by its token applies once", func(t *testing.T) {
		db := dynamodb.NewFromConfig(awsCfg)
		tx := func(token, pk string) error {
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
				ClientRequestToken: aws.String(token),
				TransactItems: []types.TransactWriteItem{{Put: &types.Put{
					TableName:           aws.String("tprovision"),
					Item:                map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "x"}},
					ConditionExpression: aws.String("attribute_not_exists(PK)"),
				}}},
			})
			return err
		}
		if err := tx("token-1", "ONCE"); err != nil {
			t.Fatalf("first call: %v", err)
		}
		if err := tx("token-1", "ONCE"); err != nil {
			t.Fatalf("a retry with the same token failed (DynamoDB answers success): %v", err)
		}
		var tce *types.TransactionCanceledException
		if err := tx("token-2", "ONCE"); !errors.As(err, &tce) {
			t.Fatalf("a new token re-applying the write: %v, want the condition to fail", err)
		}
		if err := tx("token-1", "OTHER"); err == nil {
			t.Fatal("the token reused for another request was accepted")
		}
	})
	// Issue 19 finding 4: the launcher answered a retried single-item write with
	// its first answer, which DynamoDB never does. A retry meets its own effect.
	t.Run("a retried single-item write fails its own condition, as on DynamoDB", func(t *testing.T) {
		put := func(invocation string) int {
			body := `{"TableName":"tprovision","Item":{"PK":{"S":"RETRY"},"SK":{"S":"x"}},"ConditionExpression":"attribute_not_exists(PK)"}`
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.URL+"/", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-amz-json-1.0")
			req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem")
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=testing/20261124/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0")
			req.Header.Set("amz-sdk-invocation-id", invocation)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res.StatusCode
		}
		if got := put("invocation-1"); got != http.StatusOK {
			t.Fatalf("first attempt: %d", got)
		}
		if got := put("invocation-1"); got != http.StatusBadRequest {
			t.Fatalf("a retry of the same operation answered %d, want its condition to fail (400), as DynamoDB does", got)
		}
		if got := put("invocation-2"); got != http.StatusBadRequest {
			t.Fatalf("another operation answered %d, want its condition to fail (400)", got)
		}
	})
	t.Run("reads return every attribute type as written", func(t *testing.T) {
		db := dynamodb.NewFromConfig(awsCfg)
		table := aws.String("tprovision")
		item := map[string]types.AttributeValue{
			"PK":     &types.AttributeValueMemberS{Value: "TYPES"},
			"SK":     &types.AttributeValueMemberS{Value: "x"},
			"GSI1PK": &types.AttributeValueMemberS{Value: "TYPES"},
			"GSI1SK": &types.AttributeValueMemberS{Value: "x"},
			"s":      &types.AttributeValueMemberS{Value: "é \"quoted\" \u2028 <tag>"},
			"n":      &types.AttributeValueMemberN{Value: "-12.50"},
			"b":      &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 0xfe, 0xff}},
			"t":      &types.AttributeValueMemberBOOL{Value: true},
			"f":      &types.AttributeValueMemberBOOL{Value: false},
			"null":   &types.AttributeValueMemberNULL{Value: true},
			"ss":     &types.AttributeValueMemberSS{Value: []string{"a"}},
			"ns":     &types.AttributeValueMemberNS{Value: []string{"7"}},
			"bs":     &types.AttributeValueMemberBS{Value: [][]byte{{9, 8}}},
			"l":      &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}, &types.AttributeValueMemberNULL{Value: true}}},
			"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"inner": &types.AttributeValueMemberB{Value: []byte("raw")},
				"empty": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
			}},
		}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item}); err != nil {
			t.Fatal(err)
		}
		next := map[string]types.AttributeValue{"PK": item["PK"], "SK": &types.AttributeValueMemberS{Value: "y"}}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: next}); err != nil {
			t.Fatal(err)
		}
		key := map[string]types.AttributeValue{"PK": item["PK"], "SK": item["SK"]}
		same := func(op string, got map[string]types.AttributeValue) {
			t.Helper()
			if !reflect.DeepEqual(got, item) {
				t.Errorf("%s returned\n%#v\nwant\n%#v", op, got, item)
			}
		}
		g, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		same("GetItem", g.Item)
		q, err := db.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": item["PK"]}, Limit: aws.Int32(1),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Items) != 1 || q.Count != 1 || !reflect.DeepEqual(q.LastEvaluatedKey, key) || q.ConsumedCapacity == nil {
			t.Fatalf("Query: %d items, count %d, last key %v, capacity %v", len(q.Items), q.Count, q.LastEvaluatedKey, q.ConsumedCapacity)
		}
		same("Query", q.Items[0])
		gi, err := db.Query(ctx, &dynamodb.QueryInput{TableName: table, IndexName: aws.String("GSI1"),
			KeyConditionExpression: aws.String("GSI1PK = :pk"), ProjectionExpression: aws.String("b, m.inner"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": item["PK"]}})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]types.AttributeValue{"b": item["b"], "m": &types.AttributeValueMemberM{
			Value: map[string]types.AttributeValue{"inner": &types.AttributeValueMemberB{Value: []byte("raw")}}}}
		if len(gi.Items) != 1 || !reflect.DeepEqual(gi.Items[0], want) {
			t.Errorf("projected index Query = %#v, want %#v", gi.Items, want)
		}
		sc, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: table, FilterExpression: aws.String("PK = :pk AND SK = :sk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": item["PK"], ":sk": item["SK"]}})
		if err != nil {
			t.Fatal(err)
		}
		if len(sc.Items) != 1 {
			t.Fatalf("Scan: %d items", len(sc.Items))
		}
		same("Scan", sc.Items[0])
		missing := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "NONE"}, "SK": item["SK"]}
		bg, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			"tprovision": {Keys: []map[string]types.AttributeValue{key, missing}}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := bg.Responses["tprovision"]; len(got) != 1 || len(bg.UnprocessedKeys) != 0 {
			t.Fatalf("BatchGetItem: %d items, %d unprocessed", len(got), len(bg.UnprocessedKeys))
		}
		same("BatchGetItem", bg.Responses["tprovision"][0])
		none, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: missing})
		if err != nil || none.Item != nil {
			t.Errorf("GetItem of an unknown key = %v, %v; want no item", none.Item, err)
		}
		var nf *types.ResourceNotFoundException
		if _, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("no-such-table"), KeyConditionExpression: aws.String("PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": item["PK"]}}); !errors.As(err, &nf) {
			t.Errorf("Query of an unknown table: %v, want ResourceNotFoundException", err)
		}
	})
	t.Run("queries page through one partition in both directions", func(t *testing.T) {
		db := dynamodb.NewFromConfig(awsCfg)
		for _, pk := range []string{"PAGES", "PAGES-OTHER"} {
			for _, sk := range []string{"b", "a", "c"} {
				if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("tprovision"), Item: map[string]types.AttributeValue{
					"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk},
					"GSI1PK": &types.AttributeValueMemberS{Value: pk + "-INDEX"}, "GSI1SK": &types.AttributeValueMemberS{Value: sk},
				}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		pages := func(index string, forward bool) string {
			in := &dynamodb.QueryInput{TableName: aws.String("tprovision"), KeyConditionExpression: aws.String("PK = :pk"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "PAGES"}},
				Limit:                     aws.Int32(1), ScanIndexForward: aws.Bool(forward)}
			if index != "" {
				in.IndexName, in.KeyConditionExpression = aws.String(index), aws.String("GSI1PK = :pk")
				in.ExpressionAttributeValues[":pk"] = &types.AttributeValueMemberS{Value: "PAGES-INDEX"}
			}
			return querySKs(ctx, t, db, in, 5)
		}
		for _, c := range []struct {
			index   string
			forward bool
			want    string
		}{{"", true, "a,b,c"}, {"", false, "c,b,a"}, {"GSI1", true, "a,b,c"}, {"GSI1", false, "c,b,a"}} {
			if got := pages(c.index, c.forward); got != c.want {
				t.Errorf("index %q forward %v: pages %s, want %s", c.index, c.forward, got, c.want)
			}
		}
	})
	t.Run("key conditions select and order a partition's rows", func(t *testing.T) {
		// moto_atomic.py filters a table Query's rows by the key condition and
		// sorts them before moto does: the answers must be moto's (DynamoDB's).
		db := dynamodb.NewFromConfig(awsCfg)
		for _, sk := range []string{"ELEV#3", "PAM#B", "ELEV#1", "DEVICE#9", "ELEV#2", "PAM#A", "ELEV$", "ELEV#"} {
			if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("tprovision"), Item: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "KEYS"}, "SK": &types.AttributeValueMemberS{Value: sk}}}); err != nil {
				t.Fatal(err)
			}
		}
		s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
		for _, c := range []struct {
			cond    string
			vals    map[string]types.AttributeValue
			forward bool
			want    string
		}{
			{"PK = :pk AND begins_with(SK, :p)", map[string]types.AttributeValue{":p": s("ELEV#")}, true, "ELEV#,ELEV#1,ELEV#2,ELEV#3"},
			{"PK = :pk AND begins_with(SK, :p)", map[string]types.AttributeValue{":p": s("PAM#")}, false, "PAM#B,PAM#A"},
			{"PK = :pk AND SK BETWEEN :a AND :b", map[string]types.AttributeValue{":a": s("ELEV#2"), ":b": s("ELEV$")}, false, "ELEV$,ELEV#3,ELEV#2"},
			{"PK = :pk AND SK BETWEEN :a AND :b", map[string]types.AttributeValue{":a": s("A"), ":b": s("ELEV#1")}, true, "DEVICE#9,ELEV#,ELEV#1"},
			{"PK = :pk AND SK < :a", map[string]types.AttributeValue{":a": s("ELEV#1")}, false, "ELEV#,DEVICE#9"},
			{"PK = :pk AND SK >= :a", map[string]types.AttributeValue{":a": s("ELEV$")}, true, "ELEV$,PAM#A,PAM#B"},
			{"PK = :pk AND SK = :a", map[string]types.AttributeValue{":a": s("PAM#A")}, true, "PAM#A"},
			{"PK = :pk", map[string]types.AttributeValue{}, false, "PAM#B,PAM#A,ELEV$,ELEV#3,ELEV#2,ELEV#1,ELEV#,DEVICE#9"},
		} {
			c.vals[":pk"] = s("KEYS")
			in := &dynamodb.QueryInput{TableName: aws.String("tprovision"), KeyConditionExpression: aws.String(c.cond),
				ExpressionAttributeValues: c.vals, Limit: aws.Int32(2), ScanIndexForward: aws.Bool(c.forward)}
			if g := querySKs(ctx, t, db, in, 10); g != c.want {
				t.Errorf("%s %v forward %v: %s, want %s", c.cond, c.vals, c.forward, g, c.want)
			}
		}
	})
	// Issue 19 finding 4: a transaction backed up the whole table (a deep copy)
	// and restored it on failure. Now it keeps an undo log of the rows it
	// names: a cancelled transaction leaves each of them as it was.
	t.Run("a cancelled transaction leaves every row it named as it was", func(t *testing.T) {
		db := dynamodb.NewFromConfig(awsCfg)
		table := aws.String("tprovision")
		key := func(pk string) map[string]types.AttributeValue {
			return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "x"}}
		}
		row := func(pk, v string) map[string]types.AttributeValue {
			r := key(pk)
			r["v"] = &types.AttributeValueMemberS{Value: v}
			return r
		}
		for _, pk := range []string{"UNDO-UPDATED", "UNDO-DELETED", "UNDO-REPLACED"} {
			if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: row(pk, "before")}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: table, Key: key("UNDO-UPDATED"), UpdateExpression: aws.String("SET v = :v, w = :v"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: "after"}}}},
			{Put: &types.Put{TableName: table, Item: row("UNDO-CREATED", "after")}},
			{Put: &types.Put{TableName: table, Item: row("UNDO-REPLACED", "after")}},
			{Delete: &types.Delete{TableName: table, Key: key("UNDO-DELETED")}},
			{ConditionCheck: &types.ConditionCheck{TableName: table, Key: key("UNDO-MISSING"), ConditionExpression: aws.String("attribute_exists(PK)")}},
		}})
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) {
			t.Fatalf("transaction: %v, want it cancelled", err)
		}
		for pk, want := range map[string]string{"UNDO-UPDATED": "before", "UNDO-DELETED": "before", "UNDO-REPLACED": "before", "UNDO-CREATED": ""} {
			g, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key(pk), ConsistentRead: aws.Bool(true)})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if v, ok := g.Item["v"].(*types.AttributeValueMemberS); ok {
				got = v.Value
			}
			if got != want || (pk == "UNDO-UPDATED" && g.Item["w"] != nil) {
				t.Errorf("%s after the cancelled transaction: %v, want v=%q", pk, g.Item, want)
			}
		}
	})
	pid := m.PID()
	m.Stop()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("moto_server (pid %d) still runs after Stop", pid)
	}
}

func TestEnsureKeepsANamedEmulator(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
	m, err := emulator.Ensure(t.Context())
	if m != nil || err != nil {
		t.Fatalf("Ensure = %v, %v; want nothing started", m, err)
	}
	m.Stop() // a nil Moto stops nothing
}
