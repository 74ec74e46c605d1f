// Package keyauth authenticates X-API-Key: the Authenticator that
// shared/auth consults (its KeyAuthenticator) on the routes that accept keys.
//
// It holds only the request path, in the order of the OpenAPI document's
// apiKeyAuth (see Authenticator): what a key is (its rows, its creator cache
// and the creator-entitlement check rotation applies too) is shared/apikey's,
// and a principal's state is shared/principal's; this package imports both
// and nothing imports it but shared/app, which builds it into shared/auth for
// every function. Keeping it apart is what lets the key and principal
// services stay out of every binary's reachable code.
//
// A valid key is read and counted in three steps, the last two side by side:
// one BatchGetItem (the guard), one UpdateItem (the rate-limit count and
// usage; a new usage row one write more) beside one BatchGetItem (the
// organization and the principal or the creator's rows) (budgets: docs/budgets.md, from tests/fixture/budgets.go). Unknown and malformed keys spend a cell of the client
// address's bucket (300 per minute, ratelimit.BadAPIKeyIP).
package keyauth

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/principal"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Authenticator checks X-API-Key (shared/auth's KeyAuthenticator): the steps
// of the OpenAPI document's apiKeyAuth, in three steps of which the last two
// run side by side, and no write to the key's guard:
//
//  1. one consistent read of the key's guard: an unknown, revoked or expired
//     key is refused here, before anything is counted (an unknown key counts
//     against the client address's window instead, ratelimit.BadAPIKeyIP,
//     and past 300 a minute is refused with 429; a valid key is never refused
//     by its address's window, so a noisy neighbour behind the same address
//     cannot lock it out);
//  2. one conditional UpdateItem counts the request on the key's own usage
//     row (apikey.UsageKey: shared/ratelimit's flat row, 1 write unit whatever the
//     limit) and sets lastUsedAt and usageCount there; past the limit it
//     writes nothing and the request is refused;
//  3. beside it, one BatchGetItem, with consistent reads, reads the key's
//     organization (a key outliving its deleted organization is unknown) and,
//     for a principal's key, the principal (a disabled principal's keys are
//     refused while their rows are being revoked) or, for a user-created key,
//     its creator's profile, membership and the custom roles the guard
//     caches, and compares them with what the guard cached.
//
// The guard, which carries the creator's permissions cache, is written only
// when that cache is stale (a creator whose role or roles changed) and when a
// key expires; the row written per request is the small usage row.
type Authenticator struct {
	St     apikey.Store
	Roles  role.Store
	Limits ratelimit.Limiter
	Clock  clock.Clock
	// LimitOf, when set, replaces each key's rateLimit (tests of the limit+1st
	// request need not make 1,000 first).
	LimitOf func(rateLimit int) int
}

func (a *Authenticator) limit(g *apikey.Guard) int {
	n := max(g.RateLimit, 1)
	if a.LimitOf != nil {
		n = a.LimitOf(n)
	}
	return n
}

// AuthenticateKey returns the principal of raw, setting the rate-limit headers
// on w.
func (a *Authenticator) AuthenticateKey(ctx context.Context, w http.ResponseWriter, r *http.Request, raw string) (*authz.Principal, error) {
	now := a.Clock.Now()
	g, hash, err := a.guard(ctx, httpapi.SourceIP(r), raw, now)
	if err != nil {
		return nil, err
	}
	items, err := a.countAndRead(ctx, w, g, hash, now)
	if err != nil {
		return nil, err
	}
	if err := a.actsFor(ctx, g, items); err != nil {
		return nil, err
	}
	return principalOf(g), nil
}

// guard reads the guard row of raw and answers it while the key is live and
// acts for someone (a service principal or its creator), with the key's hash.
func (a *Authenticator) guard(ctx context.Context, ip, raw string, now time.Time) (*apikey.Guard, string, error) {
	if !strings.HasPrefix(raw, apikey.Prefix) {
		return nil, "", a.badKey(ctx, ip, errKeyFormat)
	}
	if !apikey.WellFormed(raw) { // truncated or altered: it cannot match a key
		return nil, "", a.badKey(ctx, ip, errKeyUnknown)
	}
	hash := apikey.Hash(raw)
	gk := apikey.GuardKey(hash)
	first, err := a.St.St.BatchGet(ctx, gk)
	if err != nil {
		return nil, "", err
	}
	item := first[gk.PK+"|"+gk.SK]
	if item == nil {
		return nil, "", a.badKey(ctx, ip, errKeyUnknown)
	}
	var g apikey.Guard
	if err := store.Unmarshal(item, &g); err != nil {
		return nil, "", err
	}
	switch {
	case g.Status == apikey.StatusExpired:
		return nil, "", errKeyExpired
	case g.Status != apikey.StatusActive:
		return nil, "", errKeyRevoked
	case apikey.Expired(g.ExpiresAt, now):
		if err := a.St.Expire(ctx, &g, now); err != nil {
			return nil, "", err
		}
		return nil, "", errKeyExpired
	case g.PrincipalID == "" && g.Creator == nil:
		return nil, "", errKeyUnknown
	}
	return &g, hash, nil
}

// countAndRead counts the request against the key's rate limit (setting the
// rate-limit headers on w) and reads what the key acts for: its organization
// and its service principal or its creator's rows. Both depend only on the
// guard, so they run side by side.
func (a *Authenticator) countAndRead(ctx context.Context, w http.ResponseWriter, g *apikey.Guard, hash string, now time.Time) (map[string]store.Item, error) {
	refs := []store.KeyRef{tenant.OrgKey(g.OrgID)}
	if g.PrincipalID == "" {
		refs = append(refs, g.CreatorRefs()...)
	} else {
		refs = append(refs, principal.Ref(g.OrgID, g.PrincipalID))
	}
	type read struct {
		items map[string]store.Item
		err   error
	}
	reads := make(chan read, 1)
	go func() {
		items, err := a.St.St.BatchGet(ctx, refs...)
		reads <- read{items, err}
	}()
	limit := a.limit(g)
	usage := func(u expression.UpdateBuilder) expression.UpdateBuilder {
		return u.Set(expression.Name("lastUsedAt"), expression.Value(clock.Format(now))).
			Add(expression.Name("usageCount"), expression.Value(1))
	}
	win, cerr := a.Limits.CountOn(ctx, apikey.UsageKey(hash), apikey.Rule(limit), usage)
	rd := <-reads
	if cerr != nil {
		if errors.Is(cerr, fault.ErrRateLimited) {
			header(w, limit, win)
			return nil, fault.RateLimited(errLimitedMessage, win.RetryAfter(now))
		}
		return nil, cerr
	}
	header(w, limit, win)
	return rd.items, rd.err
}

// actsFor checks, on the rows countAndRead read, that the key's organization
// exists and that its service principal is active or its creator still holds
// the role cached on g (refreshing the cache when the creator changed but
// still may hold a key).
func (a *Authenticator) actsFor(ctx context.Context, g *apikey.Guard, items map[string]store.Item) error {
	if org := tenant.OrgKey(g.OrgID); items[org.PK+"|"+org.SK] == nil {
		return errKeyUnknown // its organization was deleted
	}
	if g.PrincipalID != "" {
		if spk := principal.Ref(g.OrgID, g.PrincipalID); !principal.IsActive(items[spk.PK+"|"+spk.SK]) {
			// Disabled: its key rows may still be on their way to revoked.
			return errKeyRevoked
		}
		return nil
	}
	ok, err := g.CreatorHolds(items)
	if err != nil || ok {
		return err
	}
	// The creator changed: disabled, removed, restricted, or another role.
	ok, err = a.St.RefreshCreator(ctx, a.Roles, g)
	if err == nil && !ok {
		return errKeyUnknown
	}
	return err
}

func header(w http.ResponseWriter, limit int, win ratelimit.Window) {
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(limit-win.Count, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(win.Reset.Unix()+boolInt(win.Reset.Nanosecond() > 0), 10))
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// badKey spends a cell of ip's unknown-key bucket and answers err, or 429
// once the address has probed too much.
func (a *Authenticator) badKey(ctx context.Context, ip string, err error) error {
	if lerr := a.Limits.Allow(ctx, ratelimit.BadAPIKeyIP, ip); lerr != nil {
		return lerr
	}
	return err
}

// principalOf is the caller a key acts as: in its organization, with its
// scopes, bounded by its creator's permissions (or, for a principal's key,
// its own scopes).
func principalOf(g *apikey.Guard) *authz.Principal {
	p := &authz.Principal{Kind: authz.KindAPIKey, Scope: authz.ScopeOrg, PartnerID: g.PartnerID, OrgID: g.OrgID,
		APIKeyID: g.KeyID, KeyPrefix: g.KeyPrefix, KeyScopes: g.Scopes, ServicePrincipalID: g.PrincipalID, Perms: authz.Set{}}
	perms := g.Scopes
	if g.PrincipalID == "" {
		p.UserID, perms = g.Creator.UserID, g.Creator.Perms
	} else {
		p.UserID = g.PrincipalID
	}
	for _, s := range perms {
		if s == "*" {
			p.Perms[authz.AdminAll] = true
		} else if perm, ok := authz.Parse(s); ok {
			p.Perms[perm] = true
		}
	}
	return p
}
