// Package passkey owns WebAuthn passkeys as a second factor: registration
// behind a current-password step-up, listing, renaming and deletion of one's own
// passkeys, and the passkey leg of the MFA login sequence, which ends in
// signin.Complete like every other sign-in. The WebAuthn ceremonies themselves
// (options, attestation and assertion verification) are go-webauthn's, configured in relyingparty.go.
//
// Rows (PK / SK):
//
//	passkey     USER#<uid> / PASSKEY#<credential id, base64url>   name, publicKey, signCount, aaguid, transports, flags,
//	                                                              attestation type/format, createdAt, lastUsedAt
//	challenge   PKCHAL#<sha256(user id)> / REGISTER               WebAuthn session, passkey name; ttl 5 min
//	            PKCHAL#<sha256(temp token)> / ASSERT              WebAuthn session, userId; ttl 5 min
//	profile     USER#<uid> / PROFILE                              passkeyCount (kept here), mfaEnabled, mfaMethod
//
// A user's passkeys live in the user's own partition, so listing them is one
// query (SK prefix PASSKEY#; no other SK of the partition starts with it) and no
// request can reach another user's passkey: every key is built from the caller.
// A challenge is taken, not read: one DeleteItem that returns the deleted item, so
// of two verifications presenting the same challenge exactly one gets it. A newer
// options call replaces an unused challenge of the same user or temp token.
//
// The profile's passkeyCount moves in the same transaction as every passkey put
// or delete and is compared-and-swapped there, so "is this the last factor?" is
// decided on a count no concurrent registration can change underneath.
package passkey

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// Passkey is one registered WebAuthn credential of a user.
type Passkey struct {
	store.Keys
	// ID is the WebAuthn credential id, base64url without padding; it is also the
	// API id of the passkey.
	ID                string   `dynamodbav:"id"`
	UserID            string   `dynamodbav:"userId"`
	Name              string   `dynamodbav:"name"`
	PublicKey         []byte   `dynamodbav:"publicKey"` // COSE key as the authenticator sent it
	SignCount         uint32   `dynamodbav:"signCount"` // never omitted: the compare-and-swap reads it
	AAGUID            string   `dynamodbav:"aaguid,omitempty"`
	Transports        []string `dynamodbav:"transports,omitempty"`
	Flags             uint8    `dynamodbav:"flags"` // authenticator data flags (UP, UV, BE, BS) as last seen
	Attachment        string   `dynamodbav:"attachment,omitempty"`
	AttestationType   string   `dynamodbav:"attestationType,omitempty"`
	AttestationFormat string   `dynamodbav:"attestationFormat,omitempty"`
	CreatedAt         string   `dynamodbav:"createdAt"`
	LastUsedAt        string   `dynamodbav:"lastUsedAt,omitempty"`
}

// Key is the key of passkey credID of userID.
func Key(userID, credID string) store.KeyRef {
	return user.Key(userID, skPrefix+credID)
}

const skPrefix = "PASSKEY#"

// Store reads and writes passkeys and their challenges.
type Store struct{ St *store.Store }

// List returns the passkeys of userID, oldest id first (one query).
func (s Store) List(ctx context.Context, userID string) ([]Passkey, error) {
	out := []Passkey{}
	if err := s.St.AllInto(ctx, store.Query{PK: user.PK(userID), SKPrefix: skPrefix}, &out); err != nil {
		return nil, fmt.Errorf("passkeys of %s: %w", userID, err)
	}
	return out, nil
}

// Rename sets the name of userID's passkey credID and returns it (one conditional
// UpdateItem); store.ErrNotFound when the user has no such passkey.
func (s Store) Rename(ctx context.Context, userID, credID, name string) (*Passkey, error) {
	k := Key(userID, credID)
	var pk Passkey
	w := store.Change(k.PK, k.SK, expression.Set(expression.Name("name"), expression.Value(name))).Exists()
	if err := s.St.UpdateReturn(ctx, w, &pk); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, store.ErrNotFound
		}
		return nil, fmt.Errorf("rename passkey %s: %w", credID, err)
	}
	return &pk, nil
}

// Ceremonies a challenge belongs to.
const (
	ceremonyRegister = "REGISTER"
	ceremonyAssert   = "ASSERT"
)

// challenge is a WebAuthn ceremony in flight.
type challenge struct {
	store.Keys
	UserID    string `dynamodbav:"userId"`
	Name      string `dynamodbav:"name,omitempty"` // registration: the passkey's name
	Session   string `dynamodbav:"session"`        // webauthn.SessionData (go-webauthn), JSON
	ExpiresAt string `dynamodbav:"expiresAt"`
}

// challengeKey keys a ceremony by the hash of what it is bound to: the user's id
// for a registration, the MFA temp token for an assertion (never stored in clear).
func challengeKey(ceremony, boundTo string) store.KeyRef {
	sum := sha256.Sum256([]byte(boundTo))
	return store.KeyRef{PK: "PKCHAL#" + hex.EncodeToString(sum[:]), SK: ceremony}
}

// putChallenge stores a ceremony's session for ttl, replacing an unused one.
func (s Store) putChallenge(ctx context.Context, k store.KeyRef, c challenge, exp time.Time) error {
	c.Keys = store.Keys{PK: k.PK, SK: k.SK, TTL: store.TTL(exp)}
	c.ExpiresAt = clock.Stamp(exp)
	if err := s.St.Do(ctx, store.Put(c)); err != nil {
		return fmt.Errorf("store passkey challenge: %w", err)
	}
	return nil
}

// errNoChallenge is an absent, already taken or expired challenge.
var errNoChallenge = errors.New("passkey: no live challenge")

// takeChallenge deletes the challenge at k and returns it: consumed on first
// read, whatever the verification then decides.
func (s Store) takeChallenge(ctx context.Context, k store.KeyRef, now time.Time) (*challenge, error) {
	var c challenge
	if err := s.St.Take(ctx, k.PK, k.SK, &c); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, errNoChallenge
		}
		return nil, fmt.Errorf("take passkey challenge: %w", err)
	}
	exp, err := time.Parse(time.RFC3339Nano, c.ExpiresAt)
	if err != nil || !now.Before(exp) {
		return nil, errNoChallenge
	}
	return &c, nil
}

// credentialID renders a raw credential id as the passkey's id.
func credentialID(raw []byte) string { return base64.RawURLEncoding.EncodeToString(raw) }

// decodeID turns a passkey's id back into the raw credential id.
func decodeID(id string) ([]byte, error) {
	if !validID(id) {
		return nil, errors.New("not a base64url credential id")
	}
	return base64.RawURLEncoding.DecodeString(id)
}

// maxIDLen bounds a passkey id so that its sort key ("PASSKEY#" + id) fits
// DynamoDB's 1024 bytes: base64url of at most 762 bytes. WebAuthn allows
// credential ids of up to 1023 bytes; authenticators use far shorter ones, and
// a longer one is refused at registration rather than failing in DynamoDB.
const maxIDLen = 1024 - len(skPrefix)

// validID reports whether id can be a stored passkey's id: base64url of a
// credential id of at least one byte, short enough for its key (maxIDLen).
func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil && len(b) >= 1
}

// otherFactorCond restates otherFactor over the profile, so that a profile
// update decided on it fails when a concurrent change made it false.
func otherFactorCond() expression.ConditionBuilder {
	secret := expression.Name("mfaSecret").AttributeExists().And(expression.Name("mfaSecret").NotEqual(expression.Value("")))
	return secret.Or(store.Is("mfaSmsEnabled", true), store.Is("mfaEnabled", true).And(store.Is("mfaMethod", "sms")))
}

// noOtherFactorCond is otherFactorCond's negation, spelled out so an absent
// attribute counts as "no factor".
func noOtherFactorCond() expression.ConditionBuilder {
	noSecret := expression.Name("mfaSecret").AttributeNotExists().Or(store.Is("mfaSecret", ""))
	return noSecret.And(expression.Not(store.Is("mfaSmsEnabled", true)),
		expression.Not(store.Is("mfaEnabled", true).And(store.Is("mfaMethod", "sms"))))
}

// addedWrite counts a new passkey on userID's profile and turns MFA on, while
// the user is active, below MaxPerUser passkeys, and (primary: with no other
// factor, making passkeys the method; else with another factor) as decided.
func addedWrite(userID string, primary bool, stamp string) *store.Write {
	prof := user.ProfileKey(userID)
	upd := expression.Set(expression.Name("mfaEnabled"), expression.Value(true)).
		Set(expression.Name("updatedAt"), expression.Value(stamp)).
		Add(expression.Name("passkeyCount"), expression.Value(1))
	room := expression.Name("passkeyCount").AttributeNotExists().Or(expression.Name("passkeyCount").LessThan(expression.Value(MaxPerUser)))
	cond := store.Is("status", user.StatusActive).And(room)
	if primary {
		upd = upd.Set(expression.Name("mfaMethod"), expression.Value(Method))
		cond = cond.And(noOtherFactorCond())
	} else {
		cond = cond.And(otherFactorCond())
	}
	return store.Change(prof.PK, prof.SK, upd).When(cond).Exists()
}

// removedWrite uncounts one of n passkeys on userID's profile (compare-and-swap
// on the count). With method "" the user keeps other passkeys; with
// method Method another factor remains and stays primary; with another method
// (the last passkey was primary) that factor becomes primary.
func removedWrite(userID string, n int, method, stamp string) *store.Write {
	prof := user.ProfileKey(userID)
	upd := expression.Set(expression.Name("updatedAt"), expression.Value(stamp)).
		Add(expression.Name("passkeyCount"), expression.Value(-1))
	cond := store.Is("passkeyCount", n)
	switch method {
	case "":
	case Method:
		cond = cond.And(otherFactorCond())
	default:
		upd = upd.Set(expression.Name("mfaMethod"), expression.Value(method))
		cond = cond.And(store.Is("mfaMethod", Method), otherFactorCond())
	}
	return store.Change(prof.PK, prof.SK, upd).When(cond).Exists()
}

// lastFactorRemovedWrite uncounts the last passkey of an account with no other
// factor: MFA goes off with its method and recovery codes.
func lastFactorRemovedWrite(userID string, n int, stamp string) *store.Write {
	prof := user.ProfileKey(userID)
	upd := expression.Set(expression.Name("mfaEnabled"), expression.Value(false)).
		Set(expression.Name("updatedAt"), expression.Value(stamp)).
		Remove(expression.Name("mfaMethod")).Remove(expression.Name("mfaRecoveryCodes")).
		Add(expression.Name("passkeyCount"), expression.Value(-1))
	return store.Change(prof.PK, prof.SK, upd).When(store.Is("passkeyCount", n).And(noOtherFactorCond())).Exists()
}

// usedWrite records a sign-in with passkey k: the new signature counter and
// flags, only while the counter is the one read (one winner of concurrent uses).
func usedWrite(k store.KeyRef, oldCount, newCount uint32, flags uint8, now string) *store.Write {
	upd := expression.Set(expression.Name("signCount"), expression.Value(newCount)).
		Set(expression.Name("flags"), expression.Value(flags)).
		Set(expression.Name("lastUsedAt"), expression.Value(now))
	return store.Change(k.PK, k.SK, upd).When(store.Is("signCount", oldCount)).Exists()
}
