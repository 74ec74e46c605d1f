package webauthn

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

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
	CrossOrigin       bool   `json:"crossOriginAllowedThere"`
	TopOrigin         bool   `json:"topOrigin"`
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

func b64hex(t *testing.T, s string) string { return base64.RawURLEncoding.EncodeToString(unhex(t, s)) }

// wantRefusal is this package's verdict on a vector: cross-origin ceremonies
// are refused (the spec leaves that to the RP), and so are attestation formats
// other than none and packed.
func wantRefusal(v vector) string {
	switch {
	case strings.Contains(v.Name, "CrossOrigin") || strings.Contains(v.Name, "TopOrigin"):
		return "cross-origin ceremonies are refused"
	case v.Format != "" && v.Format != "none" && v.Format != "packed":
		return fmt.Sprintf("unsupported attestation format %q", v.Format)
	}
	return ""
}

func TestW3CRegistrationVectors(t *testing.T) {
	vs := loadVectors(t)
	rp, err := New(vs.RPID, "Example", []string{vs.Origin}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs.Registration {
		t.Run(fmt.Sprintf("%02d-%s", i, v.Name), func(t *testing.T) {
			id := b64hex(t, v.CredentialID)
			body, _ := json.Marshal(map[string]any{"id": id, "rawId": id, "type": "public-key", "response": map[string]string{
				"clientDataJSON": b64hex(t, v.ClientDataJSON), "attestationObject": b64hex(t, v.AttestationObject)}})
			r, err := ParseRegistration(body)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			c, err := rp.VerifyRegistration(&Session{Challenge: b64hex(t, v.Challenge)}, r)
			if want := wantRefusal(v); want != "" {
				if Reason(err) != want {
					t.Fatalf("verify: %v, want refusal %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("verify (%s): %v", v.Section, err)
			}
			if hex.EncodeToString(c.ID) != v.CredentialID || c.AttestationFormat != v.Format {
				t.Errorf("credential %x format %s, want %s %s", c.ID, c.AttestationFormat, v.CredentialID, v.Format)
			}
			wantType := map[string]string{"none": "none", "packed": "basic"}[v.Format]
			if strings.HasPrefix(v.Name, "PackedSelf") {
				wantType = "self"
			}
			if c.AttestationType != wantType {
				t.Errorf("attestation type %s, want %s", c.AttestationType, wantType)
			}
			if _, err := parseKey(c.PublicKey); err != nil {
				t.Errorf("stored key does not parse: %v", err)
			}
		})
	}
}

func TestW3CAuthenticationVectors(t *testing.T) {
	vs := loadVectors(t)
	rp, _ := New(vs.RPID, "Example", []string{vs.Origin}, 0)
	for i, v := range vs.Authentication {
		t.Run(fmt.Sprintf("%02d-%s", i, v.Name), func(t *testing.T) {
			id := unhex(t, v.CredentialID)
			authData := unhex(t, v.AuthenticatorData)
			cred := Credential{ID: id, PublicKey: unhex(t, v.CredentialPubKey), Flags: Flags(authData[32])}
			assert := func(mutate func(map[string]string)) (*Verified, error) {
				resp := map[string]string{"clientDataJSON": b64hex(t, v.ClientDataJSON),
					"authenticatorData": b64hex(t, v.AuthenticatorData), "signature": b64hex(t, v.Signature)}
				if v.UserHandle != "" {
					resp["userHandle"] = b64hex(t, v.UserHandle)
				}
				if mutate != nil {
					mutate(resp)
				}
				body, _ := json.Marshal(map[string]any{"id": b64(id), "rawId": b64(id), "type": "public-key", "response": resp})
				a, err := ParseAssertion(body)
				if err != nil {
					return nil, err
				}
				return rp.VerifyAssertion(&Session{Challenge: b64hex(t, v.Challenge), Allowed: []string{b64(id)}}, a, []Credential{cred})
			}
			got, err := assert(nil)
			if want := wantRefusal(vector{Name: v.Name}); want != "" {
				if Reason(err) != want {
					t.Fatalf("verify: %v, want refusal %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("verify (%s): %v", v.Section, err)
			}
			if got.CloneWarning || got.Credential.ID == nil {
				t.Errorf("verified %+v", got)
			}
			// The same vector with its signature's last byte changed is refused.
			_, err = assert(func(r map[string]string) {
				sig := unhex(t, v.Signature)
				sig[len(sig)-1] ^= 1
				r["signature"] = b64(sig)
			})
			if Reason(err) != "signature is invalid" {
				t.Errorf("tampered signature: %v", err)
			}
		})
	}
}
