package passkey

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/passhash"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
)

// Limits of passkeys (described on the routes in the OpenAPI document).
const (
	// ChallengeTTL is the life of a registration or login challenge.
	ChallengeTTL = 5 * time.Minute
	// MaxPerUser bounds a user's passkeys, so a user's partition and the
	// allowCredentials list stay small.
	MaxPerUser = 20
	// NameMax bounds a passkey's name.
	NameMax = 100
	// DefaultName names a passkey registered without one.
	DefaultName = "Passkey"
	// Method is the mfaMethod value of a passkey.
	Method = "passkey"
)

// Users reads accounts (user.Store).
type Users interface {
	Get(ctx context.Context, id string) (*user.User, error)
}

// SignIn is the part of sign-in the passkey login leg uses (*signin.Service).
type SignIn interface {
	PendingUser(ctx context.Context, tempToken string) (*user.User, error)
	Pending(ctx context.Context, tempToken string) (*signin.Pending, error)
	FinishPending(ctx context.Context, pd *signin.Pending, c signin.Client, pc signin.ProfileChange,
		extra ...*store.Write) (signin.Result, error)
}

// Policy reads the organization MFA policy binding a user's account: whether
// MFA is required and which methods are allowed (mfa.OrgPolicy, the
// one reading shared/mfa uses too).
type Policy interface {
	UserMFAPolicy(ctx context.Context, userID string) (requireMFA bool, allowedMethods []string, err error)
}

// Service registers, manages and verifies passkeys.
type Service struct {
	Store  Store
	Users  Users
	SignIn SignIn
	Policy Policy // nil: no organization policy applies
	Limits ratelimit.Limiter
	Clock  clock.Clock
	RP     *RP
}

// View is a passkey as its owner sees it: never the public key.
type View struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	CreatedAt  string  `json:"createdAt"`
	LastUsedAt *string `json:"lastUsedAt"`
}

func (k *Passkey) view() View {
	v := View{ID: k.ID, Name: k.Name, CreatedAt: k.CreatedAt}
	if k.LastUsedAt != "" {
		last := k.LastUsedAt
		v.LastUsedAt = &last
	}
	return v
}

// Registered answers a completed registration.
type Registered struct {
	Passkey    View   `json:"passkey"`
	MFAEnabled bool   `json:"mfaEnabled"`
	MFAMethod  string `json:"mfaMethod"`
}

// credential rebuilds go-webauthn's record of k: what its assertions are
// verified against (key, flags for the backup-eligibility rule, sign count for
// the clone check).
func (k *Passkey) credential() (webauthn.Credential, error) {
	id, err := decodeID(k.ID)
	if err != nil {
		return webauthn.Credential{}, fmt.Errorf("passkey %s: id: %w", k.ID, err)
	}
	c := webauthn.Credential{ID: id, PublicKey: k.PublicKey, AttestationType: k.AttestationType,
		AttestationFormat: k.AttestationFormat, Flags: webauthn.NewCredentialFlags(protocol.AuthenticatorFlags(k.Flags)),
		Authenticator: webauthn.Authenticator{SignCount: k.SignCount, Attachment: protocol.AuthenticatorAttachment(k.Attachment)}}
	if g, err := uuid.Parse(k.AAGUID); err == nil {
		c.Authenticator.AAGUID = g[:]
	}
	for _, t := range k.Transports {
		c.Transport = append(c.Transport, protocol.AuthenticatorTransport(t))
	}
	return c, nil
}

func credentials(keys []Passkey) ([]webauthn.Credential, error) {
	out := make([]webauthn.Credential, 0, len(keys))
	for i := range keys {
		c, err := keys[i].credential()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// newPasskey is the record of a credential accepted at registration.
func newPasskey(userID, name string, c *webauthn.Credential, now string) Passkey {
	id := credentialID(c.ID)
	k := Key(userID, id)
	pk := Passkey{Keys: store.Keys{PK: k.PK, SK: k.SK}, ID: id, UserID: userID, Name: name, PublicKey: c.PublicKey,
		SignCount: c.Authenticator.SignCount, Flags: uint8(c.Flags.ProtocolValue()), Attachment: string(c.Authenticator.Attachment),
		AttestationType: c.AttestationType, AttestationFormat: c.AttestationFormat, CreatedAt: now}
	if g, err := uuid.FromBytes(c.Authenticator.AAGUID); err == nil {
		pk.AAGUID = g.String()
	}
	for _, t := range c.Transport {
		pk.Transports = append(pk.Transports, string(t))
	}
	return pk
}

// otherFactor reports whether u has a TOTP or SMS factor besides passkeys: a
// TOTP secret, or SMS enabled (shared/mfa's mfaSmsEnabled, or SMS as the primary
// method of an MFA-enabled account).
func otherFactor(u *user.User) bool {
	return u.MFASecret != "" || u.MFASMSEnabled || (u.MFAEnabled && u.MFAMethod == "sms")
}

// orgRules is the organization MFA policy binding userID's account (Policy:
// every organization the user is a member of, strictest wins, read the same way
// as shared/mfa reads it): whether MFA is required and whether passkeys are
// allowed.
func (s *Service) orgRules(ctx context.Context, userID string) (requireMFA, passkeyAllowed bool, err error) {
	if s.Policy == nil {
		return false, true, nil
	}
	requireMFA, allowed, err := s.Policy.UserMFAPolicy(ctx, userID)
	if err != nil {
		return false, false, err
	}
	return requireMFA, slices.Contains(allowed, Method), nil
}

// allowed refuses when an organization of the caller excludes passkey MFA.
func (s *Service) allowed(ctx context.Context, p *authz.Principal) error {
	_, ok, err := s.orgRules(ctx, p.UserID)
	if err != nil {
		return err
	}
	if !ok {
		return ErrMethodNotAllowed
	}
	return nil
}

// stepUp counts a password re-entry against PasskeyPassword (per user, apart
// from login's limits) and checks it. Every attempt counts, so the Argon2id work
// an attacker holding a session can cause is bounded too.
func (s *Service) stepUp(ctx context.Context, userID, password string) (*user.User, error) {
	if err := s.Limits.Allow(ctx, ratelimit.PasskeyPassword, userID); err != nil {
		return nil, err
	}
	u, err := s.Users.Get(ctx, userID)
	if err != nil {
		return nil, err
	}
	if !passhash.Verify(u.PasswordHash, password) {
		return nil, ErrPassword
	}
	return u, nil
}

func checkName(f fault.Fields, name string) string {
	name = strings.TrimSpace(name)
	valid.Len(f, "name", name, 1, NameMax)
	return name
}

// RegisterOptions starts a registration: after the password step-up it returns
// creation options ({publicKey: {...}}), excluding the user's existing
// credentials, and keeps the challenge for ChallengeTTL.
func (s *Service) RegisterOptions(ctx context.Context, currentPassword, name string) (*protocol.CredentialCreation, error) {
	p, err := authz.AccountOwner(ctx) // own account: any user signed in with their own credential
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	if currentPassword == "" {
		f.Add("currentPassword", "is required")
	}
	if strings.TrimSpace(name) == "" {
		name = DefaultName
	}
	name = checkName(f, name)
	if err := f.Err(); err != nil {
		return nil, err
	}
	if err := s.allowed(ctx, p); err != nil {
		return nil, err
	}
	u, err := s.stepUp(ctx, p.UserID, currentPassword)
	if err != nil {
		return nil, err
	}
	keys, err := s.Store.List(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	if len(keys) >= MaxPerUser {
		return nil, ErrLimit.WithDetails(map[string]int{"max": MaxPerUser})
	}
	creds, err := credentials(keys)
	if err != nil {
		return nil, err
	}
	creation, sess, err := s.RP.BeginRegistration(u, creds)
	if err != nil {
		return nil, fmt.Errorf("passkey registration options: %w", err)
	}
	raw, err := json.Marshal(sess)
	if err != nil {
		return nil, fmt.Errorf("passkey registration session: %w", err)
	}
	exp := s.Clock.Now().Add(ChallengeTTL)
	if err := s.Store.putChallenge(ctx, challengeKey(ceremonyRegister, u.ID),
		challenge{UserID: u.ID, Name: name, Session: string(raw)}, exp); err != nil {
		return nil, err
	}
	return creation, nil
}

// RegisterVerify completes a registration with the authenticator's credential
// JSON: it takes the challenge, verifies the attestation, and in one transaction
// stores the passkey, turns MFA on (making passkey the primary method only when
// no TOTP or SMS factor exists) and records auth.mfa.passkey.register.
func (s *Service) RegisterVerify(ctx context.Context, body []byte) (*Registered, error) {
	p, err := authz.AccountOwner(ctx) // own account: any user signed in with their own credential
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(body)
	if err != nil {
		return nil, fault.Invalid("body", "must be a WebAuthn registration credential ("+Reason(err)+")")
	}
	if err := s.allowed(ctx, p); err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	ch, err := s.Store.takeChallenge(ctx, challengeKey(ceremonyRegister, p.UserID), now)
	if errors.Is(err, errNoChallenge) {
		return nil, ErrRegistrationChallenge
	}
	if err != nil {
		return nil, err
	}
	var sess webauthn.SessionData
	if err := json.Unmarshal([]byte(ch.Session), &sess); err != nil || ch.UserID != p.UserID {
		return nil, ErrRegistrationChallenge
	}
	u, err := s.Users.Get(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	cred, err := s.RP.FinishRegistration(u, sess, parsed)
	if err != nil {
		slog.InfoContext(ctx, "passkey registration refused", "reason", Reason(err))
		return nil, ErrRegistration.WithDetails(map[string]string{"reason": Reason(err)})
	}
	if !validID(credentialID(cred.ID)) {
		return nil, ErrRegistration.WithDetails(map[string]string{"reason": "credential id too long"})
	}
	stamp := clock.Format(now)
	pk := newPasskey(u.ID, ch.Name, cred, stamp)
	primary := !otherFactor(u)
	method := u.MFAMethod
	if primary {
		method = Method
	}
	tx := &store.Tx{}
	put := tx.Include(store.PutNew(pk))
	tx.Add(addedWrite(u.ID, primary, stamp),
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID,
			Action: "auth.mfa.passkey.register", ResourceType: "passkey", ResourceID: pk.ID, ResourceName: pk.Name,
			Details: map[string]any{"userId": u.ID, "aaguid": pk.AAGUID, "primary": primary}}))
	if err := s.Store.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		switch {
		case errors.As(err, &te) && te.FailedOn(put):
			return nil, ErrDuplicate
		case errors.As(err, &te):
			return nil, ErrConcurrent
		}
		return nil, fmt.Errorf("register passkey for %s: %w", u.ID, err)
	}
	return &Registered{Passkey: pk.view(), MFAEnabled: true, MFAMethod: method}, nil
}

// List returns the caller's passkeys, oldest first.
func (s *Service) List(ctx context.Context) ([]View, error) {
	p, err := authz.SignedIn(ctx) // own passkeys only: any signed-in user
	if err != nil {
		return nil, err
	}
	keys, err := s.Store.List(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(keys, func(a, b Passkey) int { return strings.Compare(a.CreatedAt, b.CreatedAt) })
	out := make([]View, 0, len(keys))
	for i := range keys {
		out = append(out, keys[i].view())
	}
	return out, nil
}

// Rename renames one of the caller's passkeys; another user's id is 404.
func (s *Service) Rename(ctx context.Context, id, name string) (*View, error) {
	p, err := authz.AccountOwner(ctx) // own passkeys only: the key is built from the caller
	if err != nil {
		return nil, err
	}
	if err := pathID(id); err != nil {
		return nil, err
	}
	f := fault.Fields{}
	name = checkName(f, name)
	if err := f.Err(); err != nil {
		return nil, err
	}
	pk, err := s.Store.Rename(ctx, p.UserID, id, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	v := pk.view()
	return &v, nil
}

// Delete removes one of the caller's passkeys after the password step-up. When
// it is the account's last MFA factor, MFA turns off, unless the caller's role
// forces MFA or an organization of the user requires it: then it is refused
// (403, as /auth/mfa/disable is under requireMfa).
func (s *Service) Delete(ctx context.Context, id, currentPassword string) error {
	p, err := authz.AccountOwner(ctx) // own passkeys only: the key is built from the caller
	if err != nil {
		return err
	}
	if err := pathID(id); err != nil {
		return err
	}
	if currentPassword == "" {
		return fault.Invalid("currentPassword", "is required")
	}
	u, err := s.stepUp(ctx, p.UserID, currentPassword)
	if err != nil {
		return err
	}
	keys, err := s.Store.List(ctx, u.ID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(keys, func(k Passkey) bool { return k.ID == id })
	if i < 0 {
		return ErrNotFound
	}
	target := keys[i]
	n := u.PasskeyCount
	last, other := n <= 1, otherFactor(u)
	if last && !other {
		if err := s.mayDropLastFactor(ctx, p); err != nil {
			return err
		}
	}
	stamp := clock.Format(s.Clock.Now())
	var upd *store.Write
	switch {
	case !last:
		upd = removedWrite(u.ID, n, "", stamp)
	case !other:
		upd = lastFactorRemovedWrite(u.ID, n, stamp)
	case u.MFAMethod == Method:
		// The primary method goes with the last passkey: fall back to what remains.
		next := "sms"
		if u.MFASecret != "" {
			next = "totp"
		}
		upd = removedWrite(u.ID, n, next, stamp)
	default:
		upd = removedWrite(u.ID, n, Method, stamp)
	}
	k := Key(u.ID, target.ID)
	tx := &store.Tx{}
	del := tx.Include(store.Delete(k.PK, k.SK).Exists())
	tx.Add(upd,
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID,
			Action: "auth.mfa.passkey.delete", ResourceType: "passkey", ResourceID: target.ID, ResourceName: target.Name,
			Details: map[string]any{"userId": u.ID, "mfaDisabled": last && !other}}))
	if err := s.Store.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		switch {
		case errors.As(err, &te) && te.FailedOn(del):
			return ErrNotFound
		case errors.As(err, &te):
			return ErrConcurrent
		}
		return fmt.Errorf("delete passkey %s: %w", target.ID, err)
	}
	return nil
}

// mayDropLastFactor refuses removing the account's last MFA factor under a
// Force MFA role or when an organization of the user requires MFA.
func (s *Service) mayDropLastFactor(ctx context.Context, p *authz.Principal) error {
	if p.ForceMFA {
		return ErrLastFactor
	}
	require, _, err := s.orgRules(ctx, p.UserID)
	if err != nil {
		return err
	}
	if require {
		return ErrLastFactor
	}
	return nil
}

// LoginOptions starts the passkey leg of an MFA sign-in: assertion options
// allowing the pending user's passkeys, the challenge bound to the temp token
// for ChallengeTTL.
func (s *Service) LoginOptions(ctx context.Context, tempToken string) (*protocol.CredentialAssertion, error) {
	// Public route: no principal yet; the temp token is the credential.
	if tempToken == "" {
		return nil, fault.Invalid("tempToken", "is required")
	}
	u, err := s.SignIn.PendingUser(ctx, tempToken)
	if err != nil {
		return nil, err
	}
	keys, err := s.Store.List(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, ErrNoPasskeys
	}
	creds, err := credentials(keys)
	if err != nil {
		return nil, err
	}
	assertion, sess, err := s.RP.BeginLogin(u, creds)
	if err != nil {
		return nil, fmt.Errorf("passkey login options: %w", err)
	}
	raw, err := json.Marshal(sess)
	if err != nil {
		return nil, fmt.Errorf("passkey login session: %w", err)
	}
	exp := s.Clock.Now().Add(ChallengeTTL)
	if err := s.Store.putChallenge(ctx, challengeKey(ceremonyAssert, tempToken),
		challenge{UserID: u.ID, Session: string(raw)}, exp); err != nil {
		return nil, err
	}
	return assertion, nil
}

// LoginVerify finishes an MFA sign-in with a passkey assertion. The new sign
// count is written with a compare-and-swap on the old one in the same
// transaction as the session, the temp token's spending and the audit record
// (signin.Complete), so of concurrent assertions exactly one signs in. A sign
// count that did not increase (when either is non-zero) is refused and not
// stored.
func (s *Service) LoginVerify(ctx context.Context, tempToken string, credential []byte, c signin.Client) (signin.Result, error) {
	// Public route: no principal yet; the temp token and the assertion are the credentials.
	f := fault.Fields{}
	if tempToken == "" {
		f.Add("tempToken", "is required")
	}
	var parsed *protocol.ParsedCredentialAssertionData
	if len(credential) == 0 || string(credential) == "null" {
		f.Add("credential", "is required")
	} else {
		var err error
		if parsed, err = protocol.ParseCredentialRequestResponseBytes(credential); err != nil {
			f.Add("credential", "must be a WebAuthn assertion ("+Reason(err)+")")
		}
	}
	if err := f.Err(); err != nil {
		return signin.Result{}, err
	}
	pd, err := s.SignIn.Pending(ctx, tempToken)
	if err != nil {
		return signin.Result{}, err
	}
	u := pd.User
	if err := s.Limits.Allow(ctx, ratelimit.MFAVerify, u.ID); err != nil {
		return signin.Result{}, err
	}
	now := s.Clock.Now()
	ch, err := s.Store.takeChallenge(ctx, challengeKey(ceremonyAssert, tempToken), now)
	if errors.Is(err, errNoChallenge) {
		return signin.Result{}, ErrLoginChallenge
	}
	if err != nil {
		return signin.Result{}, err
	}
	var sess webauthn.SessionData
	if err := json.Unmarshal([]byte(ch.Session), &sess); err != nil || ch.UserID != u.ID {
		return signin.Result{}, ErrLoginChallenge
	}
	keys, err := s.Store.List(ctx, u.ID)
	if err != nil {
		return signin.Result{}, err
	}
	creds, err := credentials(keys)
	if err != nil {
		return signin.Result{}, err
	}
	cred, err := s.RP.FinishLogin(u, creds, sess, parsed)
	if errors.Is(err, errCloned) {
		slog.WarnContext(ctx, "passkey sign count did not increase: possible cloned authenticator",
			"userId", u.ID, "passkeyId", credentialID(cred.ID), "stored", cred.Authenticator.SignCount,
			"presented", parsed.Response.AuthenticatorData.Counter)
		return signin.Result{}, ErrCloned
	}
	if err != nil {
		slog.InfoContext(ctx, "passkey assertion refused", "userId", u.ID, "reason", Reason(err))
		return signin.Result{}, ErrAssertion
	}
	id := credentialID(cred.ID)
	i := slices.IndexFunc(keys, func(k Passkey) bool { return k.ID == id })
	if i < 0 {
		return signin.Result{}, ErrAssertion
	}
	stored := keys[i]
	k := Key(u.ID, id)
	cas := usedWrite(k, stored.SignCount, cred.Authenticator.SignCount, uint8(cred.Flags.ProtocolValue()), clock.Format(now))
	res, err := s.SignIn.FinishPending(ctx, pd, c, signin.ProfileChange{}, cas)
	if errors.Is(err, signin.ErrInvalidCredentials) {
		// The temp token was spent or the sign count moved concurrently: one winner.
		return signin.Result{}, ErrAssertion
	}
	return res, err
}

// pathID checks a passkey id of the path.
func pathID(id string) error {
	if !validID(id) {
		return fault.Invalid("id", "must be a passkey id (base64url credential id)")
	}
	return nil
}
