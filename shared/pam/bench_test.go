package pam_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// benchWorld is one organization with an admin, a device and the PAM,
// agents and enrollment-keys groups.
func benchWorld(b *testing.B) (*testenv.Env, http.Handler, fixture.Caller, string, string, string) {
	env := testenv.New(b)
	p := fixture.Partner(b, env, "P")
	o := fixture.Org(b, env, p.ID, "O")
	admin := fixture.User(b, env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: p.ID, OrgID: o.ID, RoleID: role.OrgAdminID, MFA: true})
	api := fixture.API(b, env, "pam", "agents", "enrollment-keys")
	var k struct{ Key string }
	fixture.Expect(b, fixture.Do(b, api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/enrollment-keys", Token: admin.Token,
		Body: map[string]any{"name": "bench"}}), http.StatusCreated).Decode(b, &k)
	var e struct{ DeviceID, AuthToken string }
	fixture.Expect(b, fixture.Do(b, api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/agents/enroll", RemoteAddr: "192.0.2.1:1",
		Body: fixture.EnrollBody(k.Key, "bench")}), http.StatusCreated).Decode(b, &e)
	return env, api, admin, o.ID, e.DeviceID, e.AuthToken
}

// BenchmarkIngest drives agent elevation ingest (pending results, with 20
// enabled rules that do not match) and reports the DynamoDB calls on the
// request path (4: token, limit, PAM rows, transaction). The post-answer work (event send and outbox clear, the
// mobile fan-out) runs outside the request's count.
// Run: go test -run '^$' -bench Ingest -benchtime 200x ./shared/pam/
func BenchmarkIngest(b *testing.B) {
	env, api, admin, _, dev, tok := benchWorld(b)
	for i := range 20 {
		fixture.Expect(b, fixture.Do(b, api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/pam/rules", Token: admin.Token,
			Body: map[string]any{"name": fmt.Sprint("r", i), "verdict": "auto_deny", "matchPathGlob": fmt.Sprintf("D:/nothing%d/**", i)}}), http.StatusCreated)
	}
	req := fixture.Request{Method: http.MethodPost, Path: "/api/v1/agents/" + dev + "/elevation-requests", Token: tok, Body: prompt("CORP\\carol", `C:\Tools\setup.exe`)}
	calls := 0
	self0, emu0, _ := cpuUsed()
	b.ResetTimer()
	for range b.N {
		env.Clock.Advance(time.Second) // steady state: an idle ingest bucket
		res := fixture.Serve(b, api, req)
		if res.Status != http.StatusCreated {
			b.Fatalf("ingest %d: %s", res.Status, res.Body)
		}
		calls += res.DBCalls
	}
	b.StopTimer()
	reportCPU(b, self0, emu0)
	b.ReportMetric(float64(calls)/float64(b.N), "dynamodb-calls/op")
}

// BenchmarkPreviewTenThousand previews a draft rule over 10,000 historical
// requests (the window holds more than the 5,000 a preview scans).
// Run: go test -run '^$' -bench PreviewTenThousand -benchtime 5x ./shared/pam/
func BenchmarkPreviewTenThousand(b *testing.B) {
	env, api, admin, orgID, dev, _ := benchWorld(b)
	now := env.Clock.Now()
	var batch []store.Item
	flush := func() {
		if err := batchWrite(env, batch); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	for i := range 10000 {
		at := now.Add(-time.Duration(i) * time.Minute)
		r := &pam.Request{ID: pam.NewRequestID(at), OrgID: orgID, DeviceID: dev, FlowType: "uac_intercept", Status: "pending",
			SubjectUsername: fmt.Sprintf("CORP\\user%d", i%50), TargetExecutablePath: fmt.Sprintf(`C:\Tools\t%d\setup.exe`, i%20),
			TargetExecutableSigner: "Contoso Ltd", RequestedAt: at.UTC().Format("2006-01-02T15:04:05.000Z"), UpdatedAt: "x"}
		r.Keys = pam.RequestKeys(orgID, r.ID)
		it, err := store.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, it)
		if len(batch) == 25 {
			flush()
		}
	}
	flush()
	req := fixture.Request{Method: http.MethodPost, Path: "/api/v1/pam/rules/preview", Token: admin.Token,
		Body: map[string]any{"matchPathGlob": "C:/Tools/t1*/**", "matchUser": "corp\\user7", "matchNegate": []string{"user"}, "windowDays": 30}}
	var last map[string]any
	calls := 0
	self0, emu0, _ := cpuUsed()
	b.ResetTimer()
	for range b.N {
		res := fixture.Expect(b, fixture.Serve(b, api, req), http.StatusOK)
		last = res.JSON(b)
		calls += res.DBCalls
	}
	b.StopTimer()
	reportCPU(b, self0, emu0)
	if last["totalScanned"] != float64(5000) || last["truncated"] != true {
		b.Fatalf("preview %v", last)
	}
	b.ReportMetric(float64(calls)/float64(b.N), "dbcalls/op")
	b.ReportMetric(last["totalMatched"].(float64), "matches")
}

// reportCPU reports the CPU time per op since self0 and emu0 (cpuUsed) of
// this process (the handler, the SDK, the test client) and of the emulator:
// their sum is what one request costs on a quiet machine, where the two run
// in turn, whatever other processes share it now.
func reportCPU(b *testing.B, self0, emu0 time.Duration) {
	self1, emu1, ok := cpuUsed()
	if self1 == 0 {
		return
	}
	n := float64(b.N)
	b.ReportMetric(float64((self1-self0).Milliseconds())/n, "go-cpu-ms/op")
	if ok {
		b.ReportMetric(float64((emu1-emu0).Milliseconds())/n, "emulator-cpu-ms/op")
		b.ReportMetric(float64((self1-self0+emu1-emu0).Milliseconds())/n, "cpu-ms/op")
	}
}

// batchWrite puts items directly (benchmark setup), retrying unprocessed ones.
func batchWrite(env *testenv.Env, items []store.Item) error {
	var batch []types.WriteRequest
	for _, it := range items {
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	for len(batch) > 0 {
		out, err := env.Store.DB.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{env.Store.Table: batch}})
		if err != nil {
			return err
		}
		batch = out.UnprocessedItems[env.Store.Table]
	}
	return nil
}
