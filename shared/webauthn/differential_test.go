package webauthn_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/descope/virtualwebauthn"
	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	gowebauthn "github.com/go-webauthn/webauthn/webauthn"

	"github.com/gale-rmm/gale/shared/webauthn"
)

// These tests run ceremonies of a software authenticator through this package
// and through go-webauthn (the library it replaced), and require the same
// verdict from both, then the verdicts this package's policy sets where the two
// differ on purpose.

const (
	rpID   = "gale.test"
	origin = "https://gale.test"
)

var handle = []byte("0b9f7a3e-4c52-4d35-9a3e-6d1f2f0e9c11")

type account struct{ creds []gowebauthn.Credential }

func (account) WebAuthnID() []byte                             { return handle }
func (account) WebAuthnName() string                           { return "ada@gale.test" }
func (account) WebAuthnDisplayName() string                    { return "Ada" }
func (a account) WebAuthnCredentials() []gowebauthn.Credential { return a.creds }

func libraryRP(t *testing.T) *gowebauthn.WebAuthn {
	t.Helper()
	rp, err := gowebauthn.New(&gowebauthn.Config{RPID: rpID, RPDisplayName: "Gale", RPOrigins: []string{origin},
		AttestationPreference: protocol.PreferNoAttestation})
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// credential is a software credential; EC2 keys are drawn until both
// coordinates encode to 32 bytes (virtualwebauthn trims leading zeros, which
// both verifiers rightly refuse).
func credential(kind virtualwebauthn.KeyType) virtualwebauthn.Credential {
	if kind == virtualwebauthn.KeyTypeRSA {
		return virtualwebauthn.NewCredential(kind)
	}
	for {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		if len(k.X.Bytes()) == 32 && len(k.Y.Bytes()) == 32 {
			der, _ := x509.MarshalPKCS8PrivateKey(k)
			return virtualwebauthn.NewCredentialWithImportedKey(kind, der)
		}
	}
}

type ceremony struct {
	name    string
	rp      virtualwebauthn.RelyingParty // what the authenticator and client claim
	auth    virtualwebauthn.AuthenticatorOptions
	tamper  func(body []byte) []byte
	session func(s *webauthn.Session)
	ours    string // "" accepts; else the refusal's Reason
	library bool   // go-webauthn accepts
}

// apply tampers with the response body and the session as the case says.
func (c ceremony) apply(body []byte, s *webauthn.Session) []byte {
	if c.tamper != nil {
		body = c.tamper(body)
	}
	if c.session != nil {
		c.session(s)
	}
	return body
}

// judge holds this package's verdict to the case: accepted, refused with the
// given reason, or refused for any reason ("*").
func (c ceremony) judge(t *testing.T, err error) {
	t.Helper()
	switch {
	case c.ours == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case c.ours == "*" && err == nil, c.ours != "" && c.ours != "*" && webauthn.Reason(err) != c.ours:
		t.Fatalf("verdict %v, want refusal %q", err, c.ours)
	}
}

func honest() virtualwebauthn.RelyingParty {
	return virtualwebauthn.RelyingParty{ID: rpID, Name: "Gale", Origin: origin}
}

// flipInField flips one bit in the middle of a base64url member of the
// response object.
func flipInField(field string) func([]byte) []byte {
	return func(body []byte) []byte {
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		resp := m["response"].(map[string]any)
		raw, _ := base64.RawURLEncoding.DecodeString(resp[field].(string))
		raw[len(raw)/2] ^= 0x01
		resp[field] = base64.RawURLEncoding.EncodeToString(raw)
		out, _ := json.Marshal(m)
		return out
	}
}

func TestRegistrationAgreesWithGoWebAuthn(t *testing.T) {
	ours, err := webauthn.New(rpID, "Gale", []string{origin}, 0)
	if err != nil {
		t.Fatal(err)
	}
	lib := libraryRP(t)
	other := honest()
	other.Origin = "https://evil.test"
	otherID := honest()
	otherID.ID = "evil.test"
	cases := []ceremony{
		{name: "honest", rp: honest(), library: true},
		{name: "backed up passkey", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{BackupEligible: true, BackupState: true}, library: true},
		{name: "no user verification", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{UserNotVerified: true}, library: true},
		{name: "no user presence", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{UserNotPresent: true}, ours: "user presence is required"},
		{name: "backed up without eligibility", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{BackupState: true}, ours: "backed up but not backup eligible"},
		{name: "foreign origin", rp: other, ours: `origin "https://evil.test" is not allowed`},
		{name: "foreign RP ID", rp: otherID, ours: "RP ID hash does not match"},
		{name: "other challenge", rp: honest(), session: func(s *webauthn.Session) { s.Challenge = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }, ours: "challenge does not match"},
		{name: "tampered client data", rp: honest(), tamper: flipInField("clientDataJSON"), ours: "*"},
		{name: "tampered attestation", rp: honest(), tamper: flipInField("attestationObject"), ours: "*"},
	}
	for _, kind := range []virtualwebauthn.KeyType{virtualwebauthn.KeyTypeEC2, virtualwebauthn.KeyTypeRSA} {
		for _, c := range cases {
			t.Run(string(kind)+"/"+c.name, func(t *testing.T) {
				auth := virtualwebauthn.NewAuthenticatorWithOptions(c.auth)
				cred := credential(kind)
				creation, sess, err := ours.BeginRegistration(webauthn.User{ID: handle, Name: "ada@gale.test", DisplayName: "Ada"}, nil)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := json.Marshal(creation)
				opts, err := virtualwebauthn.ParseAttestationOptions(string(raw))
				if err != nil {
					t.Fatalf("options: %v", err)
				}
				body := []byte(virtualwebauthn.CreateAttestationResponse(c.rp, auth, cred, *opts))
				body = c.apply(body, sess)
				var got *webauthn.Credential
				r, err := webauthn.ParseRegistration(body)
				if err == nil {
					got, err = ours.VerifyRegistration(sess, r)
				}
				c.judge(t, err)
				libSession := gowebauthn.SessionData{Challenge: sess.Challenge, UserID: handle, RelyingPartyID: rpID,
					UserVerification: protocol.VerificationPreferred}
				for _, p := range creation.PublicKey.PubKeyCredParams {
					libSession.CredParams = append(libSession.CredParams, protocol.CredentialParameter{
						Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.COSEAlgorithmIdentifier(p.Alg)})
				}
				parsed, perr := protocol.ParseCredentialCreationResponseBytes(body)
				var libCred *gowebauthn.Credential
				if perr == nil {
					libCred, perr = lib.CreateCredential(account{}, libSession, parsed)
				}
				if (perr == nil) != c.library {
					t.Fatalf("go-webauthn verdict %v, want accepted=%v", perr, c.library)
				}
				if got != nil && libCred != nil && (!bytes.Equal(got.ID, libCred.ID) || !bytes.Equal(got.PublicKey, libCred.PublicKey) ||
					got.SignCount != libCred.Authenticator.SignCount || byte(got.Flags) != byte(libCred.Flags.ProtocolValue())) {
					t.Errorf("credentials differ: ours %+v, go-webauthn %+v", got, libCred)
				}
			})
		}
	}
}

func TestAssertionAgreesWithGoWebAuthn(t *testing.T) {
	ours, _ := webauthn.New(rpID, "Gale", []string{origin}, 0)
	lib := libraryRP(t)
	other := honest()
	other.Origin = "https://evil.test"
	cases := []struct {
		ceremony
		stored   func(c *webauthn.Credential) // the credential as stored
		stranger bool                         // signed by another key under the registered id
		clone    bool
	}{
		{ceremony: ceremony{name: "honest", rp: honest(), library: true}},
		{ceremony: ceremony{name: "no user verification", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{UserNotVerified: true}, library: true}},
		{ceremony: ceremony{name: "no user presence", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{UserNotPresent: true}, ours: "user presence is required"}},
		{ceremony: ceremony{name: "foreign origin", rp: other, ours: `origin "https://evil.test" is not allowed`}},
		{ceremony: ceremony{name: "other challenge", rp: honest(), session: func(s *webauthn.Session) { s.Challenge = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }, ours: "challenge does not match"}},
		{ceremony: ceremony{name: "credential not allowed", rp: honest(), session: func(s *webauthn.Session) { s.Allowed = []string{"b3RoZXI"} }, ours: "credential was not allowed"}},
		{ceremony: ceremony{name: "tampered authenticator data", rp: honest(), tamper: flipInField("authenticatorData"), ours: "*"}},
		{ceremony: ceremony{name: "tampered signature", rp: honest(), tamper: flipInField("signature"), ours: "*"}},
		{ceremony: ceremony{name: "wrong key", rp: honest(), ours: "signature is invalid"}, stranger: true},
		{ceremony: ceremony{name: "backup eligibility gained", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{BackupEligible: true}, ours: "backup eligibility changed"}},
		{ceremony: ceremony{name: "sign count did not increase", rp: honest(), library: true}, clone: true,
			stored: func(c *webauthn.Credential) { c.SignCount = 7 }},
	}
	for _, kind := range []virtualwebauthn.KeyType{virtualwebauthn.KeyTypeEC2, virtualwebauthn.KeyTypeRSA} {
		for _, c := range cases {
			t.Run(string(kind)+"/"+c.name, func(t *testing.T) {
				cred := credential(kind)
				auth := virtualwebauthn.NewAuthenticator()
				// Register honestly first.
				creation, rsess, _ := ours.BeginRegistration(webauthn.User{ID: handle, Name: "ada@gale.test"}, nil)
				raw, _ := json.Marshal(creation)
				ropts, _ := virtualwebauthn.ParseAttestationOptions(string(raw))
				r, err := webauthn.ParseRegistration([]byte(virtualwebauthn.CreateAttestationResponse(honest(), auth, cred, *ropts)))
				if err != nil {
					t.Fatal(err)
				}
				stored, err := ours.VerifyRegistration(rsess, r)
				if err != nil {
					t.Fatal(err)
				}
				if c.stored != nil {
					c.stored(stored)
				}
				request, sess, err := ours.BeginLogin(handle, []webauthn.Credential{*stored})
				if err != nil {
					t.Fatal(err)
				}
				raw, _ = json.Marshal(request)
				aopts, err := virtualwebauthn.ParseAssertionOptions(string(raw))
				if err != nil {
					t.Fatalf("options: %v", err)
				}
				signer := cred
				if c.stranger {
					signer = credential(kind)
					signer.ID = cred.ID
				}
				asserting := virtualwebauthn.NewAuthenticatorWithOptions(c.auth)
				body := []byte(virtualwebauthn.CreateAssertionResponse(c.rp, asserting, signer, *aopts))
				body = c.apply(body, sess)
				var got *webauthn.Verified
				a, err := webauthn.ParseAssertion(body)
				if err == nil {
					got, err = ours.VerifyAssertion(sess, a, []webauthn.Credential{*stored})
				}
				c.judge(t, err)
				if got != nil && got.CloneWarning != c.clone {
					t.Fatalf("clone warning %v, want %v", got.CloneWarning, c.clone)
				}
				libStored := gowebauthn.Credential{ID: stored.ID, PublicKey: stored.PublicKey,
					Flags:         gowebauthn.NewCredentialFlags(protocol.AuthenticatorFlags(stored.Flags)),
					Authenticator: gowebauthn.Authenticator{SignCount: stored.SignCount}}
				libSession := gowebauthn.SessionData{Challenge: sess.Challenge, UserID: handle, RelyingPartyID: rpID,
					UserVerification: protocol.VerificationPreferred}
				for _, id := range sess.Allowed {
					b, _ := base64.RawURLEncoding.DecodeString(id)
					libSession.AllowedCredentialIDs = append(libSession.AllowedCredentialIDs, b)
				}
				parsed, perr := protocol.ParseCredentialRequestResponseBytes(body)
				var libCred *gowebauthn.Credential
				if perr == nil {
					libCred, perr = lib.ValidateLogin(account{creds: []gowebauthn.Credential{libStored}}, libSession, parsed)
				}
				if (perr == nil) != c.library {
					t.Fatalf("go-webauthn verdict %v, want accepted=%v", perr, c.library)
				}
				// On a clone warning go-webauthn answers the stored count, this
				// package the presented one (the caller stores nothing then).
				if libCred != nil && got != nil && (libCred.Authenticator.CloneWarning != got.CloneWarning ||
					(!got.CloneWarning && libCred.Authenticator.SignCount != got.SignCount)) {
					t.Errorf("go-webauthn: clone %v count %d; ours: clone %v count %d", libCred.Authenticator.CloneWarning,
						libCred.Authenticator.SignCount, got.CloneWarning, got.SignCount)
				}
			})
		}
	}
}

// The options are what browsers and go-webauthn's options were: the same
// members, challenge and user handle in base64url, attestation "none".
func TestOptionsShape(t *testing.T) {
	ours, _ := webauthn.New(rpID, "Gale", []string{origin}, 300_000_000_000)
	creation, sess, err := ours.BeginRegistration(webauthn.User{ID: handle, Name: "ada@gale.test", DisplayName: "Ada"},
		[]webauthn.Credential{{ID: []byte{1, 2, 3}, Transports: []string{"usb"}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(creation)
	for _, want := range []string{`"rp":{"id":"gale.test","name":"Gale"}`, `"user":{"id":"` + base64.RawURLEncoding.EncodeToString(handle) + `","name":"ada@gale.test","displayName":"Ada"}`,
		`{"type":"public-key","alg":-7}`, `{"type":"public-key","alg":-257}`, `"timeout":300000`,
		`"excludeCredentials":[{"type":"public-key","id":"AQID","transports":["usb"]}]`,
		`"authenticatorSelection":{"residentKey":"preferred","requireResidentKey":false,"userVerification":"preferred"}`,
		`"attestation":"none"`, `"challenge":"` + sess.Challenge + `"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("creation options lack %s: %s", want, raw)
		}
	}
	if c, _ := base64.RawURLEncoding.DecodeString(sess.Challenge); len(c) != 32 {
		t.Errorf("challenge has %d bytes, want 32", len(c))
	}
	if _, _, err := ours.BeginLogin(handle, nil); err == nil {
		t.Error("login options without a credential were issued")
	}
	if _, _, err := ours.BeginRegistration(webauthn.User{}, nil); err == nil {
		t.Error("registration options without a user handle were issued")
	}
}
