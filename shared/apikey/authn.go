package apikey

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/gale-rmm/gale/shared/user"
)

// Window is the rate-limit window of every key.
const Window = time.Hour

// maxSpendAttempts bounds the compare-and-swap retries of one request.
const maxSpendAttempts = 40

// Authenticator checks X-API-Key (shared/auth's KeyAuthenticator): the steps
// of the OpenAPI document's apiKeyAuth, in order.
type Authenticator struct {
	St     Store
	Roles  role.Store
	Limits ratelimit.Limiter
	Clock  clock.Clock
}

// AuthenticateKey returns the principal of raw, setting the rate-limit headers
// on w.
func (a *Authenticator) AuthenticateKey(ctx context.Context, w http.ResponseWriter, r *http.Request, raw string) (*authz.Principal, error) {
	ip := httpapi.SourceIP(r)
	if !strings.HasPrefix(raw, Prefix) {
		return nil, a.badKey(ctx, ip, errKeyFormat)
	}
	if !WellFormed(raw) { // truncated or altered: it cannot match a key
		return nil, a.badKey(ctx, ip, errKeyUnknown)
	}
	gk, bk := GuardKey(Hash(raw)), ratelimit.BucketKey(ratelimit.BadAPIKeyIP, ip)
	items, err := a.St.St.BatchGet(ctx, gk, bk)
	if err != nil {
		return nil, err
	}
	// An address that has probed too many keys is refused before its key is judged.
	if no, after, err := ratelimit.Refuses(ratelimit.BadAPIKeyIP, items[bk.PK+"|"+bk.SK], a.Clock.Now()); err != nil {
		return nil, err
	} else if no {
		return nil, fault.RateLimited("Too many requests", after)
	}
	item, ok := items[gk.PK+"|"+gk.SK]
	if !ok {
		return nil, a.badKey(ctx, ip, errKeyUnknown)
	}
	var g Guard
	if err := store.Unmarshal(item, &g); err != nil {
		return nil, err
	}
	for range maxSpendAttempts {
		now := a.Clock.Now()
		switch {
		case g.Status == StatusRevoked:
			return nil, errKeyRevoked
		case g.Status == StatusExpired:
			return nil, errKeyExpired
		case expired(g.ExpiresAt, now):
			if err := a.expire(ctx, &g, now); err != nil {
				return nil, err
			}
			return nil, errKeyExpired
		}
		q := quota(&g, now)
		q.header(w)
		if q.retryAfter > 0 {
			return nil, fault.RateLimited(errLimitedMessage, q.retryAfter)
		}
		tx := &store.Tx{}
		spend := tx.Include(spendWrite(&g, q.tat, clock.Format(now)))
		if g.PrincipalID == "" {
			if g.Creator == nil {
				return nil, errKeyUnknown
			}
			tx.Add(creatorChecks(&g)...)
		}
		err := a.St.St.Commit(ctx, tx)
		if err == nil {
			return principalOf(&g), nil
		}
		var te *store.TxError
		if !errors.As(err, &te) {
			return nil, err
		}
		if te.FailedOn(spend) { // another request spent a cell first, or the key changed
			fresh, err := a.St.Guard(ctx, strings.TrimPrefix(g.PK, "APIKEYHASH#"))
			if errors.Is(err, store.ErrNotFound) {
				return nil, errKeyUnknown // rotated meanwhile
			}
			if err != nil {
				return nil, err
			}
			g = *fresh
			continue
		}
		// The creator changed: disabled, removed, restricted, or another role.
		c, err := a.currentCreator(ctx, &g)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, errKeyUnknown
		}
		if err := a.St.St.Do(ctx, creatorCacheWrite(&g, c)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return nil, err
		}
		g.Creator = c
	}
	return nil, fault.Unavailable(fmt.Errorf("api key %s: rate-limit contention", g.KeyPrefix), 1)
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

// creatorChecks assert, in the spending transaction, that the creator of a
// user-created key is still active, still an unrestricted active member with
// the cached role, and that the cached custom roles are unchanged.
func creatorChecks(g *Guard) []*store.Write {
	c := g.Creator
	pk := user.ProfileKey(c.UserID)
	mk := user.MembershipKey(c.UserID, authz.Scope(c.Scope), c.PartnerID, c.OrgID)
	member := store.Present().
		And(expression.Name("status").AttributeNotExists().Or(store.Is("status", string(user.MemberActive)))).
		And(store.Is("roleId", c.RoleID)).
		And(expression.Name("siteIds").AttributeNotExists()).
		And(expression.Name("deviceGroupIds").AttributeNotExists())
	if authz.Scope(c.Scope) == authz.ScopePartner {
		member = member.And(store.Is("orgAccess", string(authz.OrgAccessAll)).
			Or(expression.Name("orgIds").Contains(g.OrgID)))
	}
	ws := []*store.Write{
		store.Assert(pk.PK, pk.SK, store.Is("status", string(user.StatusActive))),
		store.Assert(mk.PK, mk.SK, member),
	}
	for _, p := range c.Pins {
		ws = append(ws, role.Unchanged(role.Pin{Key: store.KeyRef{PK: p.PK, SK: p.SK}, Version: p.Version}))
	}
	return ws
}

// currentCreator reads what a key's creator holds now; nil when the key may
// no longer act for them.
func (a *Authenticator) currentCreator(ctx context.Context, g *Guard) (*Creator, error) {
	c := g.Creator
	pk := user.ProfileKey(c.UserID)
	mk := user.MembershipKey(c.UserID, authz.Scope(c.Scope), c.PartnerID, c.OrgID)
	items, err := a.St.St.BatchGet(ctx, pk, mk)
	if err != nil {
		return nil, err
	}
	pi, ok1 := items[pk.PK+"|"+pk.SK]
	mi, ok2 := items[mk.PK+"|"+mk.SK]
	if !ok1 || !ok2 {
		return nil, nil
	}
	var u user.User
	var m user.Membership
	if err := store.Unmarshal(pi, &u); err != nil {
		return nil, err
	}
	if err := store.Unmarshal(mi, &m); err != nil {
		return nil, err
	}
	if u.Status != user.StatusActive || !m.Active() || len(m.SiteIDs) > 0 || len(m.GroupIDs) > 0 {
		return nil, nil
	}
	if m.Scope == authz.ScopePartner && m.OrgAccess != authz.OrgAccessAll && !contains(m.OrgIDs, g.OrgID) {
		return nil, nil
	}
	set, pins, err := a.Roles.Pinned(ctx, m.RoleOwner, m.RoleID)
	if err != nil {
		return nil, err
	}
	next := &Creator{UserID: c.UserID, Scope: c.Scope, PartnerID: c.PartnerID, OrgID: c.OrgID, RoleID: m.RoleID}
	for _, p := range set.List() {
		next.Perms = append(next.Perms, p.String())
	}
	for _, p := range pins {
		next.Pins = append(next.Pins, Pin{PK: p.Key.PK, SK: p.Key.SK, Version: p.Version})
	}
	return next, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
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

// usage is a key's rate-limit state for one request.
type usage struct {
	limit, remaining int
	reset            int64 // unix seconds when the bucket is full again
	retryAfter       int   // > 0: refused
	tat              int64 // the guard's tat after this request (unix ns)
}

// quota applies GCRA over Window to g at now: a cell refills every
// Window/rateLimit, so at most rateLimit requests pass in any hour.
func quota(g *Guard, now time.Time) usage {
	rate := max(g.RateLimit, 1)
	iv := int64(Window) / int64(rate)
	n := now.UnixNano()
	base := max(g.TAT, n)
	u := usage{limit: rate}
	if base-n > int64(Window)-iv {
		u.retryAfter = int(max((base-n-(int64(Window)-iv)+int64(time.Second)-1)/int64(time.Second), 1))
		u.reset = (base + int64(time.Second) - 1) / int64(time.Second)
		return u
	}
	u.tat = base + iv
	u.remaining = int((n + int64(Window) - u.tat) / iv)
	u.reset = (u.tat + int64(time.Second) - 1) / int64(time.Second)
	return u
}

func (u usage) header(w http.ResponseWriter) {
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(u.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(u.remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(u.reset, 10))
}
