package webauthn

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/asn1"
	"encoding/binary"
	"encoding/json"
	"slices"

	"github.com/fxamacker/cbor/v2"
)

// Flags are the authenticator data flags.
type Flags byte

// Authenticator data flags (WebAuthn section 6.1).
const (
	FlagUserPresent    Flags = 1 << 0
	FlagUserVerified   Flags = 1 << 2
	FlagBackupEligible Flags = 1 << 3
	FlagBackedUp       Flags = 1 << 4
	FlagAttestedData   Flags = 1 << 6
	FlagExtensions     Flags = 1 << 7
)

// MaxCredentialIDLength is the longest credential id WebAuthn allows.
const MaxCredentialIDLength = 1023

// Credential is a registered credential: what is stored and what assertions
// are verified against.
type Credential struct {
	ID                []byte
	PublicKey         []byte // the COSE_Key, as the authenticator encoded it
	SignCount         uint32
	Flags             Flags // at registration
	AAGUID            [16]byte
	AttestationFormat string // "none" or "packed"
	AttestationType   string // "none", "self" or "basic" (packed with a certificate, not chain-verified)
	Transports        []string
	Attachment        string // "platform", "cross-platform" or ""
}

// authData is parsed authenticator data.
type authData struct {
	raw       []byte
	rpIDHash  []byte
	flags     Flags
	signCount uint32
	aaguid    [16]byte
	credID    []byte
	credKey   []byte
}

func parseAuthData(b []byte) (*authData, error) {
	if len(b) < 37 {
		return nil, refuse("authenticator data is too short")
	}
	a := &authData{raw: b, rpIDHash: b[:32], flags: Flags(b[32]), signCount: binary.BigEndian.Uint32(b[33:37])}
	rest := b[37:]
	if a.flags&FlagAttestedData != 0 {
		if len(rest) < 18 {
			return nil, refuse("attested credential data is too short")
		}
		copy(a.aaguid[:], rest[:16])
		n := int(binary.BigEndian.Uint16(rest[16:18]))
		rest = rest[18:]
		if n == 0 || n > MaxCredentialIDLength || len(rest) < n {
			return nil, refuse("credential id length is invalid")
		}
		a.credID, rest = rest[:n], rest[n:]
		var raw cbor.RawMessage
		after, err := decoder.UnmarshalFirst(rest, &raw)
		if err != nil {
			return nil, refuse("credential public key is not CBOR")
		}
		a.credKey, rest = rest[:len(rest)-len(after)], after
	}
	if a.flags&FlagExtensions != 0 {
		var ext map[string]cbor.RawMessage
		after, err := decoder.UnmarshalFirst(rest, &ext)
		if err != nil {
			return nil, refuse("authenticator extensions are not a CBOR map")
		}
		rest = after
	}
	if len(rest) != 0 {
		return nil, refuse("authenticator data has trailing bytes")
	}
	if a.flags&FlagBackedUp != 0 && a.flags&FlagBackupEligible == 0 {
		return nil, refuse("backed up but not backup eligible")
	}
	return a, nil
}

// clientData is CollectedClientData.
type clientData struct {
	Type        string `json:"type"`
	Challenge   string `json:"challenge"`
	Origin      string `json:"origin"`
	CrossOrigin bool   `json:"crossOrigin"`
	TopOrigin   string `json:"topOrigin"`
}

// response is the JSON of a PublicKeyCredential, both ceremonies.
type response struct {
	ID                      string `json:"id"`
	RawID                   string `json:"rawId"`
	Type                    string `json:"type"`
	AuthenticatorAttachment string `json:"authenticatorAttachment"`
	Response                struct {
		ClientDataJSON    string   `json:"clientDataJSON"`
		AttestationObject string   `json:"attestationObject"`
		Transports        []string `json:"transports"`
		AuthenticatorData string   `json:"authenticatorData"`
		Signature         string   `json:"signature"`
		UserHandle        string   `json:"userHandle"`
	} `json:"response"`
}

// parsed is what both ceremonies share once decoded.
type parsed struct {
	id         []byte
	clientJSON []byte
	client     clientData
	auth       *authData
}

func parseCommon(r *response, authField, authB64 string) (*parsed, error) {
	if r.ID == "" || r.RawID == "" {
		return nil, refuse("id and rawId are required")
	}
	if r.Type != publicKey {
		return nil, refuse(`type must be "public-key"`)
	}
	id, err := unb64("rawId", r.RawID)
	if err != nil {
		return nil, err
	}
	if byID, err := unb64("id", r.ID); err != nil || !bytes.Equal(id, byID) {
		return nil, refuse("id and rawId differ")
	}
	if len(id) == 0 || len(id) > MaxCredentialIDLength {
		return nil, refuse("credential id length is invalid")
	}
	p := &parsed{id: id}
	if p.clientJSON, err = unb64("clientDataJSON", r.Response.ClientDataJSON); err != nil {
		return nil, err
	}
	if json.Unmarshal(p.clientJSON, &p.client) != nil {
		return nil, refuse("clientDataJSON is not JSON client data")
	}
	if authB64 == "" {
		return nil, refuse("%s is required", authField)
	}
	return p, nil
}

// Registration is a parsed registration response (AuthenticatorAttestationResponse).
type Registration struct {
	parsed
	format     string
	statement  cbor.RawMessage
	transports []string
	attachment string
}

// attestationObject is the CBOR attestation object.
type attestationObject struct {
	Fmt      string          `cbor:"fmt"`
	AttStmt  cbor.RawMessage `cbor:"attStmt"`
	AuthData []byte          `cbor:"authData"`
}

// ParseRegistration decodes a registration response's JSON, its client data,
// attestation object and authenticator data. It verifies nothing.
func ParseRegistration(body []byte) (*Registration, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, refuse("body is not a credential object")
	}
	p, err := parseCommon(&r, "attestationObject", r.Response.AttestationObject)
	if err != nil {
		return nil, err
	}
	raw, err := unb64("attestationObject", r.Response.AttestationObject)
	if err != nil {
		return nil, err
	}
	var obj attestationObject
	if rest, err := decoder.UnmarshalFirst(raw, &obj); err != nil || len(rest) != 0 || obj.Fmt == "" || len(obj.AttStmt) == 0 {
		return nil, refuse("attestationObject is not an attestation object")
	}
	if p.auth, err = parseAuthData(obj.AuthData); err != nil {
		return nil, err
	}
	if p.auth.flags&FlagAttestedData == 0 {
		return nil, refuse("authenticator data lacks the attested credential")
	}
	return &Registration{parsed: *p, format: obj.Fmt, statement: obj.AttStmt,
		transports: r.Response.Transports, attachment: r.AuthenticatorAttachment}, nil
}

// checkClient verifies client data against the ceremony and the session.
func (rp *RP) checkClient(c clientData, ceremony string, s *Session) error {
	if c.Type != ceremony {
		return refuse("client data type is not %s", ceremony)
	}
	got, err := unb64("challenge", c.Challenge)
	want, werr := unb64("challenge", s.Challenge)
	if err != nil || werr != nil || len(want) == 0 || subtle.ConstantTimeCompare(got, want) != 1 {
		return refuse("challenge does not match")
	}
	if !slices.Contains(rp.Origins, c.Origin) {
		return refuse("origin %q is not allowed", c.Origin)
	}
	if c.CrossOrigin || c.TopOrigin != "" {
		return refuse("cross-origin ceremonies are refused")
	}
	return nil
}

// checkAuth verifies the RP ID hash and user presence.
func (rp *RP) checkAuth(a *authData) error {
	want := sha256.Sum256([]byte(rp.ID))
	if subtle.ConstantTimeCompare(a.rpIDHash, want[:]) != 1 {
		return refuse("RP ID hash does not match")
	}
	if a.flags&FlagUserPresent == 0 {
		return refuse("user presence is required")
	}
	return nil
}

// VerifyRegistration verifies r against the session s (WebAuthn 7.1) and
// returns the credential to store.
func (rp *RP) VerifyRegistration(s *Session, r *Registration) (*Credential, error) {
	if err := rp.checkClient(r.client, "webauthn.create", s); err != nil {
		return nil, err
	}
	a := r.auth
	if err := rp.checkAuth(a); err != nil {
		return nil, err
	}
	if !bytes.Equal(a.credID, r.id) {
		return nil, refuse("credential id differs from the attested one")
	}
	k, err := parseKey(a.credKey)
	if err != nil {
		return nil, err
	}
	c := &Credential{ID: r.id, PublicKey: a.credKey, SignCount: a.signCount, Flags: a.flags, AAGUID: a.aaguid,
		AttestationFormat: r.format, Transports: r.transports}
	if r.attachment == "platform" || r.attachment == "cross-platform" {
		c.Attachment = r.attachment
	}
	clientHash := sha256.Sum256(r.clientJSON)
	signed := append(slices.Clip(a.raw), clientHash[:]...)
	switch r.format {
	case "none":
		if !bytes.Equal(r.statement, []byte{0xa0}) {
			return nil, refuse(`attestation format "none" has a statement`)
		}
		c.AttestationType = "none"
	case "packed":
		if c.AttestationType, err = verifyPacked(r.statement, k, a.aaguid, signed); err != nil {
			return nil, err
		}
	default:
		return nil, refuse("unsupported attestation format %q", r.format)
	}
	return c, nil
}

// packed is a packed attestation statement (WebAuthn 8.2).
type packed struct {
	Alg int      `cbor:"alg"`
	Sig []byte   `cbor:"sig"`
	X5C [][]byte `cbor:"x5c"`
}

// idFidoAAGUID is id-fido-gen-ce-aaguid.
var idFidoAAGUID = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 45724, 1, 1, 4}

func verifyPacked(stmt cbor.RawMessage, k *key, aaguid [16]byte, signed []byte) (string, error) {
	var st packed
	if err := decoder.Unmarshal(stmt, &st); err != nil || len(st.Sig) == 0 {
		return "", refuse("packed attestation statement is malformed")
	}
	if len(st.X5C) == 0 {
		if st.Alg != k.alg || !k.verify(signed, st.Sig) {
			return "", refuse("packed self attestation signature is invalid")
		}
		return "self", nil
	}
	cert, err := x509.ParseCertificate(st.X5C[0])
	if err != nil {
		return "", refuse("packed attestation certificate is malformed")
	}
	algo, ok := certAlgorithm(st.Alg)
	if !ok || cert.CheckSignature(algo, signed, st.Sig) != nil {
		return "", refuse("packed attestation signature is invalid")
	}
	// Certificate requirements (WebAuthn 8.2.1).
	if cert.Version != 3 || cert.IsCA || !slices.Contains(cert.Subject.OrganizationalUnit, "Authenticator Attestation") ||
		len(cert.Subject.Country) == 0 || len(cert.Subject.Organization) == 0 || cert.Subject.CommonName == "" {
		return "", refuse("packed attestation certificate does not meet the requirements")
	}
	for _, ext := range cert.Extensions {
		if !ext.Id.Equal(idFidoAAGUID) {
			continue
		}
		var v []byte
		if ext.Critical {
			return "", refuse("the AAGUID extension must not be critical")
		}
		if rest, err := asn1.Unmarshal(ext.Value, &v); err != nil || len(rest) != 0 || !bytes.Equal(v, aaguid[:]) {
			return "", refuse("the certificate's AAGUID differs from the authenticator's")
		}
	}
	return "basic", nil
}

// Assertion is a parsed sign-in response (AuthenticatorAssertionResponse).
type Assertion struct {
	parsed
	signature  []byte
	userHandle []byte
}

// CredentialID is the id of the credential the assertion is for.
func (a *Assertion) CredentialID() []byte { return a.id }

// SignCount is the authenticator's signature counter in the assertion.
func (a *Assertion) SignCount() uint32 { return a.auth.signCount }

// ParseAssertion decodes a sign-in response's JSON, client data and
// authenticator data. It verifies nothing.
func ParseAssertion(body []byte) (*Assertion, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, refuse("body is not a credential object")
	}
	p, err := parseCommon(&r, "authenticatorData", r.Response.AuthenticatorData)
	if err != nil {
		return nil, err
	}
	raw, err := unb64("authenticatorData", r.Response.AuthenticatorData)
	if err != nil {
		return nil, err
	}
	if p.auth, err = parseAuthData(raw); err != nil {
		return nil, err
	}
	a := &Assertion{parsed: *p}
	if a.signature, err = unb64("signature", r.Response.Signature); err != nil || len(a.signature) == 0 {
		return nil, refuse("signature is required")
	}
	if r.Response.UserHandle != "" {
		if a.userHandle, err = unb64("userHandle", r.Response.UserHandle); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Verified is a verified assertion.
type Verified struct {
	Credential   *Credential // the matching element of the credentials passed in
	SignCount    uint32
	Flags        Flags
	CloneWarning bool // the sign count did not increase: a cloned authenticator, or a replay
}

// VerifyAssertion verifies a against the session s and the user's
// credentials (WebAuthn 7.2).
func (rp *RP) VerifyAssertion(s *Session, a *Assertion, creds []Credential) (*Verified, error) {
	id := b64(a.id)
	if len(s.Allowed) > 0 && !slices.Contains(s.Allowed, id) {
		return nil, refuse("credential was not allowed")
	}
	i := slices.IndexFunc(creds, func(c Credential) bool { return bytes.Equal(c.ID, a.id) })
	if i < 0 {
		return nil, refuse("credential is not registered")
	}
	c := &creds[i]
	if a.userHandle != nil && b64(a.userHandle) != s.UserID {
		return nil, refuse("user handle does not match")
	}
	if err := rp.checkClient(a.client, "webauthn.get", s); err != nil {
		return nil, err
	}
	if err := rp.checkAuth(a.auth); err != nil {
		return nil, err
	}
	if (a.auth.flags^c.Flags)&FlagBackupEligible != 0 {
		return nil, refuse("backup eligibility changed")
	}
	k, err := parseKey(c.PublicKey)
	if err != nil {
		return nil, err
	}
	clientHash := sha256.Sum256(a.clientJSON)
	if !k.verify(append(slices.Clip(a.auth.raw), clientHash[:]...), a.signature) {
		return nil, refuse("signature is invalid")
	}
	n := a.auth.signCount
	return &Verified{Credential: c, SignCount: n, Flags: a.auth.flags,
		CloneWarning: (n != 0 || c.SignCount != 0) && n <= c.SignCount}, nil
}
