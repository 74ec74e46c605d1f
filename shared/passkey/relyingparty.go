package passkey

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/gale-rmm/gale/shared/user"
)

// Formats are the attestation statement formats a registration may carry.
// Attestation is not requested ("none"), so browsers send "none"; "packed" is
// what security keys send regardless, and go-webauthn verifies its signature
// (and, with a certificate, the certificate's AAGUID). No certificate chain is
// trusted, so "packed" proves nothing more than "none": every other format is
// refused rather than verified by code Gale never exercises.
var Formats = []string{"none", "packed"}

// RP is Gale's WebAuthn relying party: go-webauthn (which parses and verifies
// both ceremonies) configured strictly, and the policy the library leaves to
// its caller. What the passkey service relies on, and where each is decided:
//   - no attestation requested (AttestationPreference none): config;
//   - attestation formats none and packed only: FinishRegistration;
//   - clientDataJSON's type, challenge and origin (one of WEBAUTHN_ORIGINS),
//     the RP ID hash, the signature, the user handle: the library;
//   - cross-origin (iframe) ceremonies refused: config (RPAllowCrossOrigin
//     false, no top origins);
//   - user presence required: the library, on every ceremony begun without
//     conditional mediation (Gale begins none with it);
//   - user verification preferred, not required (a passkey is a second factor
//     after the password): config;
//   - backed up without backup eligibility refused, and backup eligibility
//     fixed at registration: the library, against the flags the service stores
//     (Passkey.Flags);
//   - a sign count that did not increase (when either count is non-zero)
//     refused as a possible clone: FinishLogin, against the stored count.
//
// Challenge expiry is the challenge row's, on the injected clock: the
// library's own expiry reads the wall clock and is not enforced.
type RP struct {
	lib *webauthn.WebAuthn
}

// RelyingParty configures go-webauthn for Gale with the RP id, name and
// origins of config (WEBAUTHN_RP_ID, WEBAUTHN_RP_NAME, WEBAUTHN_ORIGINS);
// challenges (and the client-side timeout) last ChallengeTTL.
func RelyingParty(rpID, rpName string, origins []string) (*RP, error) {
	if rpID == "" || strings.ContainsAny(rpID, "/:") {
		return nil, fmt.Errorf("passkey: relying party id %q must be a domain", rpID)
	}
	if len(origins) == 0 {
		return nil, fmt.Errorf("passkey: relying party %q: at least one origin is required", rpID)
	}
	for _, o := range origins {
		// Browsers send an origin as scheme://host[:port]; go-webauthn compares
		// scheme and host, so a path or query would only hide a typo.
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return nil, fmt.Errorf("passkey: relying party %q: origin %q must be scheme://host[:port]", rpID, o)
		}
	}
	if rpName == "" {
		rpName = rpID
	}
	t := webauthn.TimeoutConfig{Timeout: ChallengeTTL, TimeoutUVD: ChallengeTTL}
	lib, err := webauthn.New(&webauthn.Config{
		RPID: rpID, RPDisplayName: rpName, RPOrigins: origins,
		RPAllowCrossOrigin:    false,
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementPreferred,
			UserVerification: protocol.VerificationPreferred,
		},
		Timeouts: webauthn.TimeoutsConfig{Login: t, Registration: t},
	})
	if err != nil {
		return nil, fmt.Errorf("passkey: relying party %q: %w", rpID, err)
	}
	return &RP{lib: lib}, nil
}

// account adapts a user and their passkeys to go-webauthn.
type account struct {
	u     *user.User
	creds []webauthn.Credential
}

// WebAuthnID is the user handle: the user's id (a UUID, no personal data).
func (a account) WebAuthnID() []byte { return []byte(a.u.ID) }

func (a account) WebAuthnName() string { return a.u.Email }

func (a account) WebAuthnDisplayName() string {
	if a.u.Name != "" {
		return a.u.Name
	}
	return a.u.Email
}

func (a account) WebAuthnCredentials() []webauthn.Credential { return a.creds }

// BeginRegistration returns creation options ({publicKey: {...}}) for u,
// excluding the credentials u already has, and the session to finish with.
func (rp *RP) BeginRegistration(u *user.User, existing []webauthn.Credential) (*protocol.CredentialCreation, *webauthn.SessionData, error) {
	return rp.lib.BeginRegistration(account{u: u, creds: existing},
		webauthn.WithExclusions(webauthn.Credentials(existing).CredentialDescriptors()))
}

// FinishRegistration verifies a parsed registration against the session and
// returns the credential to store.
func (rp *RP) FinishRegistration(u *user.User, s webauthn.SessionData, r *protocol.ParsedCredentialCreationData) (*webauthn.Credential, error) {
	if f := r.Response.AttestationObject.Format; !slices.Contains(Formats, f) {
		return nil, refusal(fmt.Sprintf("attestation format %q is not accepted", f))
	}
	return rp.lib.CreateCredential(account{u: u}, s, r)
}

// BeginLogin returns request options allowing u's credentials, and the
// session to finish with.
func (rp *RP) BeginLogin(u *user.User, creds []webauthn.Credential) (*protocol.CredentialAssertion, *webauthn.SessionData, error) {
	return rp.lib.BeginLogin(account{u: u, creds: creds})
}

// errCloned is an assertion whose sign count did not increase.
var errCloned = refusal("the sign count did not increase (possible cloned authenticator)")

// FinishLogin verifies a parsed assertion against the session and u's
// credentials, and returns the credential it matched with the presented sign
// count and flags. A sign count that did not increase over the stored one
// (when either is non-zero) is errCloned.
func (rp *RP) FinishLogin(u *user.User, creds []webauthn.Credential, s webauthn.SessionData, a *protocol.ParsedCredentialAssertionData) (*webauthn.Credential, error) {
	c, err := rp.lib.ValidateLogin(account{u: u, creds: creds}, s, a)
	if err != nil {
		return nil, err
	}
	if c.Authenticator.CloneWarning {
		return c, errCloned
	}
	return c, nil
}

// refusal is a refused ceremony whose reason is Gale's own.
func refusal(reason string) error { return protocol.ErrVerification.WithDetails(reason) }

// Reason is the client-safe text of a go-webauthn error (its Details), or
// "invalid".
func Reason(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		return pe.Details
	}
	return "invalid"
}
