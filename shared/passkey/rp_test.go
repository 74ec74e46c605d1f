package passkey_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/gale-rmm/gale/shared/passkey"
	"github.com/gale-rmm/gale/shared/user"
)

// These tests hold the relying party (go-webauthn as shared/passkey configures
// it, and the policy it adds) to the W3C specification's test vectors and to a
// table of refused ceremonies. Each check the service relies on has a case that
// fails when the check is removed from the configuration or the code; the
// package documentation of RP names where each check is made.

// vectors are the W3C specification's test vectors (WebAuthn Level 3, section
// 16), transcribed to testdata/w3c-vectors.json.
type vectors struct {
	RPID           string   `json:"rpId"`
	Origin         string   `json:"origin"`
	Registration   []vector `json:"registration"`
	Authentication []vector `json:"authentication"`
}

type vector struct {
	Name, Section     string
	AttestationObject string `json:"attestationObject"`
	ClientDataJSON    string `json:"clientDataJSON"`
	CredentialID      string `json:"credentialID"`
	Challenge         string `json:"challenge"`
	Format            string `json:"format"`
	AuthenticatorData string `json:"authenticatorData"`
	Signature         string `json:"signature"`
	UserHandle        string `json:"userHandle"`
	CredentialPubKey  string `json:"credentialPubKey"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/w3c-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Registration) < 16 || len(v.Authentication) < 16 {
		t.Fatalf("%d registration and %d authentication vectors, want 16 each", len(v.Registration), len(v.Authentication))
	}
	return v
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func b64hex(t *testing.T, s string) string { return b64(unhex(t, s)) }

// vectorRefusal is Gale's verdict on a vector where it differs from the
// specification's "valid": cross-origin ceremonies are refused, and so are
// attestation formats other than none and packed.
func vectorRefusal(v vector) string {
	switch {
	case strings.Contains(v.Name, "TopOrigin"):
		return "Error validating cross origin flag"
	case strings.Contains(v.Name, "CrossOrigin"):
		return "Error validating cross origin flag"
	case v.Format != "" && v.Format != "none" && v.Format != "packed":
		return fmt.Sprintf("attestation format %q is not accepted", v.Format)
	}
	return ""
}

func mustRP(t *testing.T, id, o string) *passkey.RP {
	t.Helper()
	rp, err := passkey.RelyingParty(id, "Gale", []string{o})
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// verdict holds a ceremony's outcome to the expected one: "" accepted, else
// a refusal whose reason (go-webauthn's details and developer information)
// contains want.
func verdict(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("refused: %s", explain(err))
	case want != "" && err == nil:
		t.Fatalf("accepted, want refusal %q", want)
	case want != "" && !strings.Contains(explain(err), want):
		t.Fatalf("refused with %q, want %q", explain(err), want)
	}
}

// explain is a refusal's client-safe reason and, for go-webauthn's errors, the
// developer information saying which check refused.
func explain(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return passkey.Reason(err) + " | " + pe.DevInfo
	}
	return err.Error()
}

func TestW3CRegistrationVectors(t *testing.T) {
	vs := loadVectors(t)
	rp := mustRP(t, vs.RPID, vs.Origin)
	u := &user.User{ID: "0b9f7a3e-4c52-4d35-9a3e-6d1f2f0e9c11", Email: "ada@example.org"}
	for i, v := range vs.Registration {
		t.Run(fmt.Sprintf("%02d-%s", i, v.Name), func(t *testing.T) {
			id := b64hex(t, v.CredentialID)
			body, _ := json.Marshal(map[string]any{"id": id, "rawId": id, "type": "public-key", "response": map[string]string{
				"clientDataJSON": b64hex(t, v.ClientDataJSON), "attestationObject": b64hex(t, v.AttestationObject)}})
			parsed, err := protocol.ParseCredentialCreationResponseBytes(body)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			// The session as BeginRegistration would have kept it, with the vector's challenge.
			_, sess, err := rp.BeginRegistration(u, nil)
			if err != nil {
				t.Fatal(err)
			}
			sess.Challenge = b64hex(t, v.Challenge)
			c, err := rp.FinishRegistration(u, *sess, parsed)
			want := vectorRefusal(v)
			verdict(t, err, want)
			if want != "" {
				return
			}
			if hex.EncodeToString(c.ID) != v.CredentialID || c.AttestationFormat != v.Format {
				t.Errorf("credential %x format %s, want %s %s (%s)", c.ID, c.AttestationFormat, v.CredentialID, v.Format, v.Section)
			}
		})
	}
}

func TestW3CAuthenticationVectors(t *testing.T) {
	vs := loadVectors(t)
	rp := mustRP(t, vs.RPID, vs.Origin)
	for i, v := range vs.Authentication {
		t.Run(fmt.Sprintf("%02d-%s", i, v.Name), func(t *testing.T) {
			id := unhex(t, v.CredentialID)
			authData := unhex(t, v.AuthenticatorData)
			u := &user.User{ID: "0b9f7a3e-4c52-4d35-9a3e-6d1f2f0e9c11"}
			if v.UserHandle != "" {
				u.ID = string(unhex(t, v.UserHandle))
			}
			cred := webauthn.Credential{ID: id, PublicKey: unhex(t, v.CredentialPubKey),
				Flags: webauthn.NewCredentialFlags(protocol.AuthenticatorFlags(authData[32]))}
			assert := func(mutate func(map[string]string)) (*webauthn.Credential, error) {
				resp := map[string]string{"clientDataJSON": b64hex(t, v.ClientDataJSON),
					"authenticatorData": b64hex(t, v.AuthenticatorData), "signature": b64hex(t, v.Signature)}
				if v.UserHandle != "" {
					resp["userHandle"] = b64hex(t, v.UserHandle)
				}
				if mutate != nil {
					mutate(resp)
				}
				body, _ := json.Marshal(map[string]any{"id": b64(id), "rawId": b64(id), "type": "public-key", "response": resp})
				parsed, err := protocol.ParseCredentialRequestResponseBytes(body)
				if err != nil {
					return nil, err
				}
				_, sess, err := rp.BeginLogin(u, []webauthn.Credential{cred})
				if err != nil {
					t.Fatal(err)
				}
				sess.Challenge = b64hex(t, v.Challenge)
				return rp.FinishLogin(u, []webauthn.Credential{cred}, *sess, parsed)
			}
			got, err := assert(nil)
			want := vectorRefusal(vector{Name: v.Name})
			verdict(t, err, want)
			if want != "" {
				return
			}
			if got.Authenticator.CloneWarning {
				t.Errorf("clone warning on %s", v.Section)
			}
			// The same vector with its signature's last byte changed is refused.
			_, err = assert(func(r map[string]string) {
				sig := unhex(t, v.Signature)
				sig[len(sig)-1] ^= 1
				r["signature"] = b64(sig)
			})
			if err == nil {
				t.Error("tampered signature accepted")
			}
		})
	}
}

// The options are go-webauthn's {publicKey: {...}} object as
// docs/decisions.md#passkeys asks, with Gale's policy in it.
func TestOptionsShape(t *testing.T) {
	rp := mustRP(t, "gale.test", "https://gale.test")
	u := &user.User{ID: "0b9f7a3e-4c52-4d35-9a3e-6d1f2f0e9c11", Email: "ada@gale.test", Name: "Ada"}
	existing := []webauthn.Credential{{ID: []byte{1, 2, 3}, Transport: []protocol.AuthenticatorTransport{"usb"}}}
	creation, sess, err := rp.BeginRegistration(u, existing)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(creation)
	for _, want := range []string{`{"publicKey":{`, `"rp":{"name":"Gale","id":"gale.test"}`,
		`"user":{"name":"ada@gale.test","displayName":"Ada","id":"` + base64.RawURLEncoding.EncodeToString([]byte(u.ID)) + `"}`,
		`{"type":"public-key","alg":-7}`, `"timeout":300000`,
		`"excludeCredentials":[{"type":"public-key","id":"AQID","transports":["usb"]}]`,
		`"authenticatorSelection":{"residentKey":"preferred","userVerification":"preferred"}`,
		`"attestation":"none"`, `"challenge":"` + sess.Challenge + `"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("creation options lack %s: %s", want, raw)
		}
	}
	if c, _ := base64.RawURLEncoding.DecodeString(sess.Challenge); len(c) < 32 {
		t.Errorf("challenge has %d bytes, want at least 32", len(c))
	}
	request, lsess, err := rp.BeginLogin(u, existing)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = json.Marshal(request)
	for _, want := range []string{`{"publicKey":{`, `"rpId":"gale.test"`, `"timeout":300000`, `"userVerification":"preferred"`,
		`"allowCredentials":[{"type":"public-key","id":"AQID","transports":["usb"]}]`, `"challenge":"` + lsess.Challenge + `"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("request options lack %s: %s", want, raw)
		}
	}
}

func TestRelyingPartyChecksItsConfiguration(t *testing.T) {
	if _, err := passkey.RelyingParty("gale.test", "", []string{"https://gale.test/", "http://localhost:8080"}); err != nil {
		t.Fatalf("RelyingParty: %v", err)
	}
	for _, c := range []struct {
		id      string
		origins []string
	}{{"", []string{"https://gale.test"}}, {"gale.test", nil}, {"gale.test", []string{"gale.test"}},
		{"gale.test", []string{"https://gale.test/login"}}, {"gale.test", []string{"https://gale.test?x=1"}}} {
		if _, err := passkey.RelyingParty(c.id, "Gale", c.origins); err == nil {
			t.Errorf("RelyingParty(%q, %q) accepted", c.id, c.origins)
		}
	}
}
