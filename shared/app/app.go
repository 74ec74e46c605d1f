// Package app wires Gale: it builds the AWS clients and shared services once per
// process (reused across warm Lambda invocations) and runs a route group as a
// Lambda function. It holds what every function needs (Deps, the health and
// not-built groups, the workers, bootstrap); each built group's wiring lives in
// its own subpackage, named after the function (functions/auth-passkeys:
// authpasskeysgroup, functions/sites: sitesgroup), so a function's
// binary links and initialises only its own group's dependencies. The groups
// subpackage is the registry of all of them, for the local runtime and tests.
package app

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/auth"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/config"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/keyauth"
	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// Deps are the process-wide dependencies every group shares.
type Deps struct {
	Cfg    config.Config
	Clock  clock.Clock
	Log    *slog.Logger
	AWS    aws.Config
	Store  *store.Store
	SQS    *sqs.Client
	Events *event.Publisher
	// Sessions issues and rotates tokens; Auth authenticates every non-public route.
	Sessions *session.Manager
	Auth     *auth.Authenticator
	Roles    role.Store
	Users    user.Store
	// Notify enqueues e-mail and SMS on the mail queue (notify.Queue); only the
	// mailer function delivers them, so only it links the SES and SNS clients.
	// or SMS link the SES and SNS clients, which keeps the other binaries small.
	Notify notify.Queue
	// Strict makes routes that skip their authorization check panic (tests).
	Strict bool
}

// NewDeps builds the clients for cfg. clk may be nil for the system clock.
func NewDeps(ctx context.Context, cfg config.Config, clk clock.Clock) (*Deps, error) {
	if clk == nil {
		clk = clock.System{}
	}
	audit.SetRetention(cfg.AuditRetention)
	awsCfg, err := cfg.AWS(ctx)
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, store.CountCalls)
	})
	st := store.New(db, cfg.Table, clk)
	q := sqs.NewFromConfig(awsCfg)
	keys, err := TokenKeys(cfg)
	if err != nil {
		return nil, err
	}
	sessions := session.NewManager(st, keys, clk)
	roles := role.Store{St: st}
	return &Deps{
		Cfg: cfg, Clock: clk, Log: NewLogger(cfg.LogLevel), AWS: awsCfg, Store: st, SQS: q,
		Events:   &event.Publisher{Store: st, SQS: q, QueueURL: cfg.EventsQueueURL},
		Sessions: sessions,
		Roles:    roles,
		Users:    user.Store{St: st},
		Notify:   notify.Queue{SQS: q, URL: cfg.MailQueueURL},
		Auth: &auth.Authenticator{St: st, Sessions: sessions, Roles: roles, Clock: clk, Enable2FA: cfg.Enable2FA,
			Keys: &keyauth.Authenticator{St: apikey.Store{St: st}, Roles: roles, Limits: ratelimit.Limiter{St: st, Clock: clk}, Clock: clk}},
	}, nil
}

// TokenKeys builds the token key ring of cfg: signing keys where the function
// holds them, and the published public keys (read lazily, never at init) where
// the public-keys secret is configured.
func TokenKeys(cfg config.Config) (*session.KeyRing, error) {
	keys, err := session.NewKeyRing(cfg.TokenKeysVersion, cfg.TokenSigningKey, cfg.TokenSigningKeyPrevious)
	if err != nil {
		return nil, err
	}
	if arn := cfg.TokenPublicKeysARN; arn != "" {
		keys.Load = func(ctx context.Context) ([]byte, error) {
			v, err := cfg.ReadSecret(ctx, arn)
			return []byte(v), err
		}
		if keys.CanSign() {
			keys.Publish = func(ctx context.Context, jwks []byte) error { return cfg.PutSecret(ctx, arn, string(jwks)) }
		}
	}
	return keys, nil
}

// Router returns a router that authenticates with d.Auth and, in tests, fails a
// route that succeeded without an authorization decision.
func (d *Deps) Router() *httpapi.Router { return d.RouterWith(d.Auth) }

// RouterWith is Router authenticating with a instead of d.Auth.
func (d *Deps) RouterWith(a httpapi.Authenticator) *httpapi.Router {
	rt := httpapi.NewRouter(a, authz.Tracker{})
	rt.Strict = d.Strict
	return rt
}

// NewLogger returns the JSON logger of every function (request ids on every
// line of a request) and makes it the process default, so code that logs
// through slog's package functions writes the same JSON.
func NewLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	log := httpapi.NewLogger(os.Stdout, l)
	slog.SetDefault(log)
	return log
}

// Builder assembles one route group's handler.
type Builder func(d *Deps) (http.Handler, error)

// Edge wraps a group router with the edge middleware (request ids, call
// counting, recovery, access log, and the request's deadline).
func (d *Deps) Edge(h http.Handler) http.Handler {
	return httpapi.EdgeCounting(httpapi.CORS(httpapi.Deadline(h, d.Cfg.RequestTimeout), d.Cfg.CORSOrigins), d.Log,
		store.CallCounter{})
}
