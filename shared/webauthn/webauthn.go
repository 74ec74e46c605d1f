// Package webauthn is Gale's WebAuthn relying party: it issues creation and
// request options and verifies registrations and assertions (W3C Web
// Authentication, Level 3, sections 7.1 and 7.2), with the standard library's
// crypto and fxamacker/cbor.
//
// Policy, and the invariants it keeps:
//   - Attestation is not requested ("none"). A registration's statement is
//     accepted in format "none" (empty statement) or "packed" (its signature
//     is verified: by the credential key for self attestation, by the leaf
//     certificate's key otherwise; no certificate chain is trusted, so a packed
//     statement proves nothing more than "none" does). Every other format is
//     refused: browsers replace them with "none" when none is requested.
//   - Credential keys: ES256, ES384, ES512, EdDSA (Ed25519), RS256 and PS256,
//     as COSE keys whose coordinates have their full length.
//   - clientDataJSON must name the ceremony's type, the issued challenge and
//     one of the configured origins; cross-origin (iframe) ceremonies are
//     refused. User presence is required; user verification is preferred, not
//     required (a passkey is a second factor after the password).
//   - An assertion's backup eligibility must equal the one registered, and a
//     sign count that does not increase (when either count is non-zero) is
//     reported as a possible clone.
//
// Errors are *Error, whose Reason is safe to show to the client.
//
// The package replaced go-webauthn in the auth-passkeys binary: go-webauthn
// links every attestation format, the FIDO metadata service and TPM parsing,
// 1.9 MB that this policy never uses. Its tests hold this package to the W3C
// specification's test vectors and to go-webauthn's verdicts on the same
// ceremonies.
package webauthn

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// COSE algorithm identifiers offered and accepted, in order of preference.
const (
	AlgES256 = -7
	AlgEdDSA = -8
	AlgES384 = -35
	AlgES512 = -36
	AlgPS256 = -37
	AlgRS256 = -257
)

var algorithms = []int{AlgES256, AlgEdDSA, AlgES384, AlgES512, AlgPS256, AlgRS256}

// Error is a refused ceremony or a malformed credential.
type Error struct{ Reason string }

func (e *Error) Error() string { return "webauthn: " + e.Reason }

func refuse(format string, args ...any) error { return &Error{Reason: fmt.Sprintf(format, args...)} }

// Reason is the client-safe text of err: its Reason for an *Error, "invalid"
// otherwise.
func Reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return "invalid"
}

// RP is a relying party.
type RP struct {
	ID      string   // the RP ID: a registrable domain, e.g. "gale.example"
	Name    string   // shown by authenticators
	Origins []string // allowed origins of clientDataJSON, e.g. "https://gale.example"
	Timeout time.Duration
	Rand    io.Reader // challenges; nil is crypto/rand
}

// New checks and returns a relying party.
func New(id, name string, origins []string, timeout time.Duration) (*RP, error) {
	if id == "" || strings.ContainsAny(id, "/:") {
		return nil, fmt.Errorf("webauthn: RP ID %q must be a domain", id)
	}
	if len(origins) == 0 {
		return nil, errors.New("webauthn: at least one origin is required")
	}
	// Browsers send an origin as scheme://host[:port]; a configured
	// "https://gale.example/" means the same.
	clean := make([]string, len(origins))
	for i, o := range origins {
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return nil, fmt.Errorf("webauthn: origin %q must be scheme://host[:port]", o)
		}
		clean[i] = u.Scheme + "://" + u.Host
	}
	if name == "" {
		name = id
	}
	return &RP{ID: id, Name: name, Origins: clean, Timeout: timeout}, nil
}

// User is the account a registration is for. ID is the user handle: opaque,
// at most 64 bytes, no personal data.
type User struct {
	ID          []byte
	Name        string
	DisplayName string
}

// Descriptor names a credential in options.
type Descriptor struct {
	Type       string   `json:"type"`
	ID         string   `json:"id"` // base64url
	Transports []string `json:"transports,omitempty"`
}

// Creation is the answer to a registration's options request:
// {publicKey: PublicKeyCredentialCreationOptions} for navigator.credentials.create.
type Creation struct {
	PublicKey CreationOptions `json:"publicKey"`
}

// CreationOptions is PublicKeyCredentialCreationOptions in its JSON form.
type CreationOptions struct {
	Challenge              string       `json:"challenge"`
	RP                     RPEntity     `json:"rp"`
	User                   UserEntity   `json:"user"`
	PubKeyCredParams       []Parameter  `json:"pubKeyCredParams"`
	Timeout                int64        `json:"timeout"`
	ExcludeCredentials     []Descriptor `json:"excludeCredentials,omitempty"`
	AuthenticatorSelection Selection    `json:"authenticatorSelection"`
	Attestation            string       `json:"attestation"`
}

// RPEntity is PublicKeyCredentialRpEntity.
type RPEntity struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// UserEntity is PublicKeyCredentialUserEntity; ID is base64url.
type UserEntity struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
}

// Parameter is PublicKeyCredentialParameters.
type Parameter struct {
	Type string `json:"type"`
	Alg  int    `json:"alg"`
}

// Selection is AuthenticatorSelectionCriteria.
type Selection struct {
	ResidentKey        string `json:"residentKey"`
	RequireResidentKey bool   `json:"requireResidentKey"`
	UserVerification   string `json:"userVerification"`
}

// Request is the answer to a sign-in's options request:
// {publicKey: PublicKeyCredentialRequestOptions} for navigator.credentials.get.
type Request struct {
	PublicKey RequestOptions `json:"publicKey"`
}

// RequestOptions is PublicKeyCredentialRequestOptions in its JSON form.
type RequestOptions struct {
	Challenge        string       `json:"challenge"`
	Timeout          int64        `json:"timeout"`
	RPID             string       `json:"rpId"`
	AllowCredentials []Descriptor `json:"allowCredentials,omitempty"`
	UserVerification string       `json:"userVerification"`
}

// Session is what the server keeps between options and verification.
type Session struct {
	Challenge string   `json:"challenge"` // base64url, as issued
	UserID    string   `json:"userId"`    // base64url user handle
	Allowed   []string `json:"allowed,omitempty"`
}

const (
	publicKey = "public-key"
	preferred = "preferred"
)

// BeginRegistration returns creation options for u, excluding the credentials
// u already has, and the session to verify the answer with.
func (rp *RP) BeginRegistration(u User, exclude []Credential) (*Creation, *Session, error) {
	if len(u.ID) == 0 || len(u.ID) > 64 {
		return nil, nil, errors.New("webauthn: a user handle has 1 to 64 bytes")
	}
	ch, err := rp.challenge()
	if err != nil {
		return nil, nil, err
	}
	params := make([]Parameter, len(algorithms))
	for i, a := range algorithms {
		params[i] = Parameter{Type: publicKey, Alg: a}
	}
	handle := b64(u.ID)
	return &Creation{PublicKey: CreationOptions{
			Challenge:              ch,
			RP:                     RPEntity{ID: rp.ID, Name: rp.Name},
			User:                   UserEntity{ID: handle, Name: u.Name, DisplayName: u.DisplayName},
			PubKeyCredParams:       params,
			Timeout:                rp.Timeout.Milliseconds(),
			ExcludeCredentials:     descriptors(exclude),
			AuthenticatorSelection: Selection{ResidentKey: preferred, UserVerification: preferred},
			Attestation:            "none",
		}}, &Session{Challenge: ch, UserID: handle},
		nil
}

// BeginLogin returns request options allowing the credentials of one user,
// and the session to verify the answer with.
func (rp *RP) BeginLogin(userID []byte, allow []Credential) (*Request, *Session, error) {
	if len(allow) == 0 {
		return nil, nil, errors.New("webauthn: no credential to allow")
	}
	ch, err := rp.challenge()
	if err != nil {
		return nil, nil, err
	}
	d := descriptors(allow)
	ids := make([]string, len(d))
	for i := range d {
		ids[i] = d[i].ID
	}
	return &Request{PublicKey: RequestOptions{Challenge: ch, Timeout: rp.Timeout.Milliseconds(), RPID: rp.ID,
		AllowCredentials: d, UserVerification: preferred}}, &Session{Challenge: ch, UserID: b64(userID), Allowed: ids}, nil
}

func (rp *RP) challenge() (string, error) {
	r := rp.Rand
	if r == nil {
		r = rand.Reader
	}
	buf := make([]byte, 32)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", fmt.Errorf("webauthn: challenge: %w", err)
	}
	return b64(buf), nil
}

func descriptors(creds []Credential) []Descriptor {
	if len(creds) == 0 {
		return nil
	}
	out := make([]Descriptor, len(creds))
	for i, c := range creds {
		out[i] = Descriptor{Type: publicKey, ID: b64(c.ID), Transports: c.Transports}
	}
	return out
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// unb64 decodes base64url with or without padding.
func unb64(field, s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, refuse("%s is not base64url", field)
	}
	return b, nil
}
