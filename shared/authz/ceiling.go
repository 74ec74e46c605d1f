package authz

import "github.com/gale-rmm/gale/shared/fault"

// # The credential ceiling (docs/decisions.md#credential-ceiling)
//
// Every route that returns key material or widens what a credential may do
// (API key create, rotate and PATCH scopes; service principal create, rotate
// and migrate-key; enrollment key create and rotate) calls Ceiling before it
// writes anything: the caller must hold, right now, every permission the
// resulting credential will act with. What a credential acts with is its
// scopes bounded by its owner (Acting):
//
//   - a user-created API key acts as its creator: its scopes, each only as far
//     as the creator still holds it ("*" is whatever the creator holds). Its
//     creator may rotate it (what it acts with is within what they hold); any
//     other caller must cover what it acts with;
//   - a service principal's key acts with its own scopes ("*" is every
//     permission), which never exceed the principal's;
//   - an enrollment key enrols devices: it acts with devices:write in its
//     organization (and site).
//
// Granting (create, PATCH scopes, migrate) checks the scopes as written: a
// caller grants only scopes it holds, "*" only when it holds *:*.

// ErrCeiling is the refusal of the ceiling.
var ErrCeiling = fault.Forbidden("Cannot grant scopes you do not hold")

// ScopePermission reads a key scope ("*" is AdminAll).
func ScopePermission(scope string) (Permission, bool) {
	if scope == "*" {
		return AdminAll, true
	}
	return Parse(scope)
}

// Acting is what a credential with scopes acts with when its owner holds
// owner; a nil owner bounds nothing (the scopes act as written).
func Acting(scopes []string, owner Set) Set {
	out := Set{}
	for _, sc := range scopes {
		perm, ok := ScopePermission(sc)
		if !ok {
			continue
		}
		if owner == nil || owner.Has(perm) {
			out[perm] = true
			continue
		}
		// A wildcard scope acts with the owner's permissions it covers.
		for q := range owner {
			if covers(perm, q) {
				out[q] = true
			}
		}
	}
	return out
}

// covers reports whether wildcard permission w includes q.
func covers(w, q Permission) bool {
	switch {
	case w == AdminAll:
		return true
	case w.Action == "*":
		return q.Resource == w.Resource
	}
	return w == q
}

// Ceiling refuses (ErrCeiling) unless p holds every permission of acting.
func Ceiling(p *Principal, acting Set) error {
	for perm := range acting {
		if !p.Holds(perm) {
			return ErrCeiling
		}
	}
	return nil
}

// CeilingScopes is Ceiling for scopes granted as written.
func CeilingScopes(p *Principal, scopes []string) error {
	return Ceiling(p, Acting(scopes, nil))
}
