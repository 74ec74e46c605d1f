package apikey

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Window is the rate-limit window of every key.
const Window = time.Hour

// Authenticator checks X-API-Key (shared/auth's KeyAuthenticator): the steps
// of the OpenAPI document's apiKeyAuth, in 3 DynamoDB calls of which the last
// two run side by side, and no write to the key's guard:
//
//  1. one consistent read of the key's guard: an unknown, revoked or expired
//     key is refused here, before anything is counted (an unknown key counts
//     against the client address's window instead, ratelimit.BadAPIKeyIP,
//     and past 300 a minute is refused with 429; a valid key is never refused
//     by its address's window, so a noisy neighbour behind the same address
//     cannot lock it out);
//  2. one conditional UpdateItem counts the request on the key's own usage
//     row (UsageKey: shared/ratelimit's flat row, 1 write unit whatever the
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
	St     Store
	Roles  role.Store
	Limits ratelimit.Limiter
	Clock  clock.Clock
	// LimitOf, when set, replaces each key's rateLimit (tests of the limit+1st
	// request need not make 1,000 first).
	LimitOf func(rateLimit int) int
}

func (a *Authenticator) limit(g *Guard) int {
	n := max(g.RateLimit, 1)
	if a.LimitOf != nil {
		n = a.LimitOf(n)
	}
	return n
}

// keyRule is the rate limit of a key: its rateLimit in any hour.
func keyRule(limit int) ratelimit.Rule {
	return ratelimit.Rule{Name: "api-key", Limit: limit, Window: Window}
}

// UsageKey is the row that counts the requests of the key with hash, and
// carries its lastUsedAt and usageCount.
func UsageKey(hash string) store.KeyRef { return ratelimit.BucketKey(keyRule(0), hash) }

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
func (a *Authenticator) guard(ctx context.Context, ip, raw string, now time.Time) (*Guard, string, error) {
	if !strings.HasPrefix(raw, Prefix) {
		return nil, "", a.badKey(ctx, ip, errKeyFormat)
	}
	if !WellFormed(raw) { // truncated or altered: it cannot match a key
		return nil, "", a.badKey(ctx, ip, errKeyUnknown)
	}
	hash := Hash(raw)
	gk := GuardKey(hash)
	first, err := a.St.St.BatchGet(ctx, gk)
	if err != nil {
		return nil, "", err
	}
	item := first[gk.PK+"|"+gk.SK]
	if item == nil {
		return nil, "", a.badKey(ctx, ip, errKeyUnknown)
	}
	var g Guard
	if err := store.Unmarshal(item, &g); err != nil {
		return nil, "", err
	}
	switch {
	case g.Status == StatusExpired:
		return nil, "", errKeyExpired
	case g.Status != StatusActive:
		return nil, "", errKeyRevoked
	case expired(g.ExpiresAt, now):
		if err := a.expire(ctx, &g, now); err != nil {
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
func (a *Authenticator) countAndRead(ctx context.Context, w http.ResponseWriter, g *Guard, hash string, now time.Time) (map[string]store.Item, error) {
	refs := []store.KeyRef{tenant.OrgKey(g.OrgID)}
	if g.PrincipalID == "" {
		refs = append(refs, creatorRefs(g)...)
	} else {
		refs = append(refs, principalRef(g))
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
	win, cerr := a.Limits.CountOn(ctx, UsageKey(hash), keyRule(limit), usage)
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

// principalRef is the row of the service principal g acts for.
func principalRef(g *Guard) store.KeyRef {
	k := principalKeys(g.OrgID, g.PrincipalID)
	return store.KeyRef{PK: k.PK, SK: k.SK}
}

// actsFor checks, on the rows countAndRead read, that the key's organization
// exists and that its service principal is active or its creator still holds
// the role cached on g (refreshing the cache when the creator changed but
// still may hold a key).
func (a *Authenticator) actsFor(ctx context.Context, g *Guard, items map[string]store.Item) error {
	if org := tenant.OrgKey(g.OrgID); items[org.PK+"|"+org.SK] == nil {
		return errKeyUnknown // its organization was deleted
	}
	if g.PrincipalID != "" {
		if spk := principalRef(g); !principalActive(items[spk.PK+"|"+spk.SK]) {
			// Disabled: its key rows may still be on their way to revoked.
			return errKeyRevoked
		}
		return nil
	}
	ok, err := creatorHolds(g, items)
	if err != nil || ok {
		return err
	}
	// The creator changed: disabled, removed, restricted, or another role.
	c, err := a.currentCreator(ctx, g)
	if err != nil {
		return err
	}
	if c == nil {
		return errKeyUnknown
	}
	if err := a.St.St.Do(ctx, creatorCacheWrite(g, c)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return err
	}
	g.Creator = c
	return nil
}

// principalActive reports whether the stored principal item is active.
func principalActive(it store.Item) bool {
	var sp struct {
		Status string `dynamodbav:"status"`
	}
	return it != nil && store.Unmarshal(it, &sp) == nil && sp.Status == SPActive
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

// creatorRefs are the rows a user-created key's creator checks read: the
// creator's profile and membership, and the cached custom roles.
func creatorRefs(g *Guard) []store.KeyRef {
	pk, mk := creatorRows(g.Creator)
	refs := []store.KeyRef{pk, mk}
	for _, p := range g.Creator.Pins {
		refs = append(refs, store.KeyRef{PK: p.PK, SK: p.SK})
	}
	return refs
}

// creatorHolds reports whether the rows read by creatorRefs still say what the
// guard cached: the creator entitled to act in the key's organization (the
// check rotation applies too), with the cached role, and the cached custom
// roles at their versions.
func creatorHolds(g *Guard, items map[string]store.Item) (bool, error) {
	c := g.Creator
	m, err := entitled(items, c, g.OrgID)
	if errors.Is(err, ErrCreatorGone) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if m.RoleID != c.RoleID {
		return false, nil
	}
	for _, p := range c.Pins {
		var row struct {
			Version int `dynamodbav:"version"`
		}
		it, ok := items[p.PK+"|"+p.SK]
		if !ok {
			return false, nil
		}
		if err := store.Unmarshal(it, &row); err != nil {
			return false, err
		}
		if row.Version != p.Version {
			return false, nil
		}
	}
	return true, nil
}

// badKey spends a cell of ip's unknown-key bucket and answers err, or 429
// once the address has probed too much.
func (a *Authenticator) badKey(ctx context.Context, ip string, err error) error {
	if lerr := a.Limits.Allow(ctx, ratelimit.BadAPIKeyIP, ip); lerr != nil {
		return lerr
	}
	return err
}

// expire persists an expired key's status (record and guard); a key changed
// meanwhile keeps its new status.
func (a *Authenticator) expire(ctx context.Context, g *Guard, now time.Time) error {
	k := &Key{Keys: recordKeys(g.OrgID, g.KeyID), KeyHash: strings.TrimPrefix(g.PK, "APIKEYHASH#")}
	err := a.St.St.Commit(ctx, (&store.Tx{}).Add(statusWrites(k, StatusExpired, clock.Format(now))...))
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return err
	}
	return nil
}

// currentCreator reads what a key's creator holds now; nil when the key may
// no longer act for them.
func (a *Authenticator) currentCreator(ctx context.Context, g *Guard) (*Creator, error) {
	c := g.Creator
	e, err := creatorNow(ctx, a.St.St, a.Roles, c, g.OrgID)
	if errors.Is(err, ErrCreatorGone) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	next := &Creator{UserID: c.UserID, Scope: c.Scope, PartnerID: c.PartnerID, OrgID: c.OrgID, RoleID: e.RoleID}
	for _, p := range e.Perms.List() {
		next.Perms = append(next.Perms, p.String())
	}
	for _, p := range e.Pins {
		next.Pins = append(next.Pins, Pin{PK: p.Key.PK, SK: p.Key.SK, Version: p.Version})
	}
	return next, nil
}

// principalOf is the caller a key acts as: in its organization, with its
// scopes, bounded by its creator's permissions (or, for a principal's key,
// its own scopes).
func principalOf(g *Guard) *authz.Principal {
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
