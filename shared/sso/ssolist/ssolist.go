// Package ssolist is where a single sign-on provider row sits in its owner's
// list: GSI4 <owner's partition>#SSOPROVS / <createdAt>#<id>, oldest first (an
// organization's providers are read by tenant.List, a partner's own by
// store.Window; no partner-wide list exists, so none is in GSI3). shared/sso
// sets these keys on every write of a provider; the list-index backfill
// (shared/backfill, run by the sweeper) gives them to rows written before. It
// is its own package so that the sweeper does not link the OpenID Connect
// libraries shared/sso needs (tests/coldstart).
package ssolist

import "github.com/gale-rmm/gale/shared/store"

// PK is the GSI4 partition of the providers of the tenant whose partition is
// ownerPK (ORG#<oid> or PARTNER#<pid>).
func PK(ownerPK string) string { return ownerPK + "#SSOPROVS" }

// Set gives a provider row (k.PK its owner's partition) its list keys.
func Set(k *store.Keys, createdAt, id string) {
	k.GSI3PK, k.GSI3SK = "", ""
	k.GSI4PK, k.GSI4SK = PK(k.PK), createdAt+"#"+id
}

// Reindex gives the providers written before their list had an index their
// list keys, in organization and partner partitions.
func Reindex() store.Reindex {
	return store.Reindex{Kind: "SSO provider", SKPrefix: "SSOPROV#", Partners: true, Keys: func(it store.Item) (store.Keys, error) {
		var r struct {
			store.Keys
			ID        string `dynamodbav:"id"`
			CreatedAt string `dynamodbav:"createdAt"`
		}
		if err := store.Unmarshal(it, &r); err != nil {
			return store.Keys{}, err
		}
		Set(&r.Keys, r.CreatedAt, r.ID)
		return r.Keys, nil
	}}
}
