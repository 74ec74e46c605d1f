// Package routes is the one route table of Gale: which Lambda function owns which
// path prefixes, which workers exist and on which schedules the sweeper runs.
//
// The CDK app (infra/cdk) and the local runtime (infra/local) both read this table,
// so what is deployed and what runs locally can never disagree. A test checks that
// every directory under functions/ has an entry here and every entry a directory.
package routes

import (
	"slices"
	"sort"
	"strings"
)

// Group is one route group: one Lambda function serving a set of path prefixes.
type Group struct {
	// Function is the directory name under functions/ and the Lambda's logical name.
	Function string
	// Prefixes are full path prefixes (written out in full, as in the OpenAPI document). A request
	// belongs to the group whose prefix matches it exactly or as a parent path.
	Prefixes []string
	// Exact are paths the group owns alone, none below them (GET / and
	// GET /api/v1, which point at the reference): a prefix there would pull
	// every unknown path into the group.
	Exact []string
}

// Groups lists every HTTP route group. Order is irrelevant: Lookup picks the
// longest matching prefix.
var Groups = []Group{
	{Function: "health", Prefixes: []string{"/api/v1/health", "/api/v1/openapi.json", "/api/v1/docs"}, Exact: []string{"/", "/api/v1"}},
	{Function: "api-keys", Prefixes: []string{"/api/v1/api-keys"}},
	{Function: "enrollment-keys", Prefixes: []string{"/api/v1/enrollment-keys"}},
	{Function: "service-principals", Prefixes: []string{"/api/v1/service-principals"}},
	{Function: "filters", Prefixes: []string{"/api/v1/filters"}},
	{Function: "search", Prefixes: []string{"/api/v1/search"}},
	{Function: "users", Prefixes: []string{"/api/v1/users"}},
	{Function: "roles", Prefixes: []string{"/api/v1/roles", "/api/v1/permissions"}},
	// The auth function issues access tokens, so it also publishes their keys.
	{Function: "auth", Prefixes: []string{"/api/v1/auth", "/api/v1/.well-known/jwks.json"}},
	// Passkeys are their own function: WebAuthn verification (CBOR, COSE keys)
	// would push the auth function past its 10 MB size budget.
	{Function: "auth-passkeys", Prefixes: []string{"/api/v1/auth/passkeys", "/api/v1/auth/mfa/passkey"}},
	{Function: "sso", Prefixes: []string{"/api/v1/sso"}},
	{Function: "access-reviews", Prefixes: []string{"/api/v1/access-reviews"}},
	{Function: "admin", Prefixes: []string{"/api/v1/admin", "/admin"}},
	{Function: "pam", Prefixes: []string{"/api/v1/pam"}},
	{Function: "devices", Prefixes: []string{"/api/v1/devices"}},
	{Function: "agents", Prefixes: []string{"/api/v1/agents"}},
	{Function: "webhooks", Prefixes: []string{"/api/v1/webhooks"}},
	{Function: "organizations", Prefixes: []string{"/api/v1/organizations"}},
	{Function: "sites", Prefixes: []string{"/api/v1/sites", "/api/v1/device-groups"}},
	{Function: "scripts", Prefixes: []string{"/api/v1/scripts"}},
	{Function: "alerts", Prefixes: []string{"/api/v1/alerts"}},
	{Function: "audit-logs", Prefixes: []string{"/api/v1/audit-logs"}},
}

// Queue names a logical SQS queue; each has a redrive dead-letter queue.
type Queue struct {
	// Name is the logical name; deployed and local names derive from it.
	Name string
	// Consumer is the worker function fed by the queue.
	Consumer string
	// MaxReceiveCount is how often a message is tried before the DLQ takes it.
	MaxReceiveCount int
	// BatchSize is the event source mapping's batch size.
	BatchSize int
	// VisibilityTimeoutSeconds must exceed the consumer's timeout.
	VisibilityTimeoutSeconds int
	// MaxConcurrency is how many batches of the queue the event source mapping
	// runs at once (its maximum concurrency); the local runtime polls with as
	// many pollers, so one slow batch does not hold the others back.
	MaxConcurrency int
}

// Queues: platform events (fanned out to webhook deliveries), webhook
// deliveries, and outbound mail and SMS (delivered by the mailer, the one
// function that links SES and SNS).
var Queues = []Queue{
	{Name: "events", MaxConcurrency: 5, Consumer: "webhook-worker", MaxReceiveCount: 5, BatchSize: 10, VisibilityTimeoutSeconds: 60},
	{Name: "webhook-deliveries", MaxConcurrency: 5, Consumer: "webhook-worker", MaxReceiveCount: 8, BatchSize: 10, VisibilityTimeoutSeconds: 60},
	{Name: "mail", MaxConcurrency: 5, Consumer: "mailer", MaxReceiveCount: 5, BatchSize: 10, VisibilityTimeoutSeconds: 60},
}

// Schedule is an EventBridge rule that fires the sweeper with a named job.
type Schedule struct {
	// Job is the rule's whole input, {"job": "<Job>"}; the sweeper dispatches on it.
	Job string
	// Rate is the EventBridge rate in minutes.
	RateMinutes int
}

// Schedules of the sweeper function. Challenges, temp tokens, sessions and
// rate-limit windows need no job: they carry a DynamoDB TTL and reads hide them
// once expired.
var Schedules = []Schedule{
	{Job: "outbox-drain", RateMinutes: 1},
	{Job: "enrollment-key-expiry", RateMinutes: 60},
	{Job: "deletion-grace", RateMinutes: 60},
	// access-review-completion resumes completions stalled past their marker
	// (shared/review: completion beyond one transaction).
	{Job: "access-review-completion", RateMinutes: 5},
	{Job: "elevation-expiry", RateMinutes: 1},
	{Job: "device-offline", RateMinutes: 1},
	// bootstrap creates the configured system administrator when it is missing
	// (one read when it exists): deploys need no manual step, and no function
	// does it on a cold start.
	{Job: "bootstrap", RateMinutes: 60},
}

// Workers are functions not behind the HTTP API (agent-channel serves the
// agent channel's WebSocket API, shared/channel).
var Workers = []string{"webhook-worker", "sweeper", "mailer", "agent-channel"}

// Lookup returns the group owning path (longest prefix wins).
func Lookup(path string) (Group, bool) {
	var best Group
	bestLen := -1
	for _, g := range Groups {
		if slices.Contains(g.Exact, path) {
			return g, true
		}
		for _, p := range g.Prefixes {
			if (path == p || strings.HasPrefix(path, p+"/")) && len(p) > bestLen {
				best, bestLen = g, len(p)
			}
		}
	}
	return best, bestLen >= 0
}

// Functions returns every function name (route groups and workers), sorted.
func Functions() []string {
	var out []string
	for _, g := range Groups {
		out = append(out, g.Function)
	}
	out = append(out, Workers...)
	sort.Strings(out)
	return out
}
