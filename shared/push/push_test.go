package push_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/push"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const targets = "/api/v1/users/me/push-targets"

var groups = []string{"users", "pam", "agents", "devices", "enrollment-keys"}

func apnsToken(b byte) string { return strings.Repeat(string("0123456789abcdef"[b%16]), 64) }

func fcmToken(s string) string { return "fcm-" + s + ":" + strings.Repeat("x", 140) }

func register(t *testing.T, w *fixture.World, caller, platform, token string) fixture.Response {
	t.Helper()
	return w.Call(t, http.MethodPost, targets, caller, map[string]any{"platform": platform, "token": token})
}

func listTargets(t *testing.T, w *fixture.World, caller string) []map[string]any {
	t.Helper()
	res := fixture.Expect(t, w.Call(t, http.MethodGet, targets, caller, nil), http.StatusOK)
	var out struct{ Data []map[string]any }
	res.Decode(t, &out)
	return out.Data
}

// TestPushTargetRoutes walks the push-target routes: create (201), refresh
// (200), list without tokens, validation, another user's target (404), a
// token moving between accounts, the cap of 10 and delete.
func TestPushTargetRoutes(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users")

	tok := apnsToken(1)
	res := fixture.Expect(t, register(t, w, fixture.ATech, "apns", strings.ToUpper(tok)), http.StatusCreated)
	fixture.Budget(t, res, 4) // authentication (2) + BatchGetItem + transaction
	if strings.Contains(string(res.Body), tok) || strings.Contains(strings.ToLower(string(res.Body)), tok) {
		t.Fatalf("the answer shows the token: %s", res.Body)
	}
	id := res.JSON(t)["id"]
	res = fixture.Expect(t, register(t, w, fixture.ATech, "apns", tok), http.StatusOK)
	if res.JSON(t)["id"] != id {
		t.Fatalf("re-registering made a new target: %s", res.Body)
	}
	fixture.Expect(t, register(t, w, fixture.ATech, "fcm", fcmToken("a")), http.StatusCreated)
	list := listTargets(t, w, fixture.ATech)
	if len(list) != 2 || list[0]["id"] != id || list[0]["platform"] != "apns" || list[1]["platform"] != "fcm" {
		t.Fatalf("list %v", list)
	}
	for _, tc := range []struct {
		body  any
		field string
	}{
		{map[string]any{"token": tok}, "platform"},
		{map[string]any{"platform": "apns"}, "token"},
		{map[string]any{"platform": "webpush", "token": tok}, "platform"},
		{map[string]any{"platform": "apns", "token": strings.Repeat("z", 64)}, "token"},
		{map[string]any{"platform": "apns", "token": "abcd"}, "token"},
		{map[string]any{"platform": "fcm", "token": "short"}, "token"},
		{map[string]any{"platform": "fcm", "token": strings.Repeat("x", 40) + " <script>"}, "token"},
		{map[string]any{"platform": 7, "token": tok}, "platform"},
		{map[string]any{"platform": "apns", "token": tok, "userId": w.Users[fixture.AAdmin]}, "userId"},
	} {
		fixture.Invalid(t, w.Call(t, http.MethodPost, targets, fixture.ATech, tc.body), tc.field)
	}
	fixture.Expect(t, w.Call(t, http.MethodPost, targets, "", map[string]any{"platform": "apns", "token": tok}), http.StatusUnauthorized)

	// Another user neither sees nor removes it.
	if got := listTargets(t, w, fixture.AAdmin); len(got) != 0 {
		t.Fatalf("another user's list %v", got)
	}
	fixture.NotFound(t, w.Call(t, http.MethodDelete, targets+"/"+id.(string), fixture.AAdmin, nil))
	fixture.Invalid(t, w.Call(t, http.MethodDelete, targets+"/not-a-uuid", fixture.ATech, nil), "id")

	// The phone changes hands: the token moves to the account registering it.
	fixture.Expect(t, register(t, w, fixture.AAdmin, "apns", tok), http.StatusCreated)
	if got := listTargets(t, w, fixture.ATech); len(got) != 1 || got[0]["platform"] != "fcm" {
		t.Fatalf("the token stayed with its first account: %v", got)
	}
	if got := listTargets(t, w, fixture.AAdmin); len(got) != 1 {
		t.Fatalf("new owner %v", got)
	}

	// Ten at most: the eleventh drops the least recently registered.
	for i := 0; i < 10; i++ {
		w.Env.Clock.Advance(1)
		fixture.Expect(t, register(t, w, fixture.ATech, "fcm", fcmToken(string(rune('b'+i)))), http.StatusCreated)
	}
	if got := listTargets(t, w, fixture.ATech); len(got) != push.MaxTargets || got[0]["platform"] != "fcm" {
		t.Fatalf("cap: %d %v", len(got), got)
	}
	// The dropped token's guard is gone: another account takes it as new.
	fixture.Expect(t, register(t, w, fixture.AViewer, "fcm", fcmToken("a")), http.StatusCreated)
	if got := listTargets(t, w, fixture.ATech); len(got) != push.MaxTargets {
		t.Fatalf("taking a dropped token changed the first account: %d", len(got))
	}

	// Delete.
	first := listTargets(t, w, fixture.ATech)[0]["id"].(string)
	res = fixture.Expect(t, w.Call(t, http.MethodDelete, targets+"/"+first, fixture.ATech, nil), http.StatusOK)
	fixture.Budget(t, res, 4)
	fixture.NotFound(t, w.Call(t, http.MethodDelete, targets+"/"+first, fixture.ATech, nil))
	if got := listTargets(t, w, fixture.ATech); len(got) != push.MaxTargets-1 {
		t.Fatalf("after delete %d", len(got))
	}
}

// pushes drains the mail queue and returns its push messages.
func pushes(t *testing.T, w *fixture.World) []notify.Message {
	t.Helper()
	var out []notify.Message
	for {
		msgs := testenv.Receive(t, w.Env.SQS, w.Env.Cfg.MailQueueURL, 0)
		if len(msgs) == 0 {
			return out
		}
		for _, m := range msgs {
			var msg notify.Message
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &msg); err != nil {
				t.Fatal(err)
			}
			if msg.Kind == notify.KindPush {
				out = append(out, msg)
			}
			_, _ = w.Env.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(w.Env.Cfg.MailQueueURL), ReceiptHandle: m.ReceiptHandle})
		}
	}
}

// approvals lists the mobile approval rows of a request as userId=status.
func approvals(t *testing.T, w *fixture.World, orgID, reqID string) map[string]string {
	t.Helper()
	as, err := push.Store{St: w.Env.Store}.Approvals(context.Background(), orgID, reqID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, a := range as {
		out[a.UserID] = a.Status
	}
	return out
}

func names(w *fixture.World, m map[string]string, status string) []string {
	var out []string
	for name, uid := range w.Users {
		if s, ok := m[uid]; ok && (status == "" || s == status) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
