package passkey_test

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/descope/virtualwebauthn"
	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/gale-rmm/gale/shared/passkey"
	"github.com/gale-rmm/gale/shared/user"
)

// The refusal table: ceremonies of a software authenticator, honest and
// altered, through the relying party, each with the verdict Gale requires (the
// cases the hand-written verifier was once held to against go-webauthn).

var ada = &user.User{ID: "0b9f7a3e-4c52-4d35-9a3e-6d1f2f0e9c11", Email: "ada@gale.test", Name: "Ada"}

func honest() virtualwebauthn.RelyingParty {
	return virtualwebauthn.RelyingParty{ID: rpID, Name: "Gale", Origin: origin}
}

// softCredential is a software credential of the kind; EC2 keys have
// full-length coordinates (ec2Credential).
func softCredential(kind virtualwebauthn.KeyType) virtualwebauthn.Credential {
	if kind == virtualwebauthn.KeyTypeRSA {
		return virtualwebauthn.NewCredential(kind)
	}
	return ec2Credential()
}

// editResponse decodes the credential JSON, lets edit change its response
// object, and encodes it again.
func editResponse(body []byte, edit func(resp map[string]any)) []byte {
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	edit(m["response"].(map[string]any))
	out, _ := json.Marshal(m)
	return out
}

// flipInField flips one bit in the middle of a base64url member of the response.
func flipInField(field string) func([]byte) []byte {
	return func(body []byte) []byte {
		return editResponse(body, func(resp map[string]any) {
			raw, _ := base64.RawURLEncoding.DecodeString(resp[field].(string))
			raw[len(raw)/2] ^= 0x01
			resp[field] = b64(raw)
		})
	}
}

// clientData rewrites one member of clientDataJSON (the signature then no
// longer covers it, so the member's own check must be the one that refuses).
func clientData(key string, value any) func([]byte) []byte {
	return func(body []byte) []byte {
		return editResponse(body, func(resp map[string]any) {
			raw, _ := base64.RawURLEncoding.DecodeString(resp["clientDataJSON"].(string))
			var cd map[string]any
			_ = json.Unmarshal(raw, &cd)
			cd[key] = value
			raw, _ = json.Marshal(cd)
			resp["clientDataJSON"] = b64(raw)
		})
	}
}

type ceremony struct {
	name    string
	rp      virtualwebauthn.RelyingParty // what the authenticator and client claim
	auth    virtualwebauthn.AuthenticatorOptions
	tamper  func(body []byte) []byte
	session func(s *webauthn.SessionData)
	want    string // "" accepts; else the refusal's Reason ("*": any)
}

func (c ceremony) judge(t *testing.T, err error) {
	t.Helper()
	if c.want == "*" {
		if err == nil {
			t.Fatal("accepted, want a refusal")
		}
		return
	}
	verdict(t, err, c.want)
}

func other(mutate func(*virtualwebauthn.RelyingParty)) virtualwebauthn.RelyingParty {
	r := honest()
	mutate(&r)
	return r
}

const (
	reasonOrigin    = "Error validating origin"
	reasonChallenge = "Error validating challenge"
	reasonPresence  = "User presence required but flag not set by authenticator"
)

var kinds = []virtualwebauthn.KeyType{virtualwebauthn.KeyTypeEC2, virtualwebauthn.KeyTypeRSA}

func TestRegistrationRefusals(t *testing.T) {
	rp := mustRP(t, rpID, origin)
	cases := []ceremony{
		{name: "honest", rp: honest()},
		{name: "backed up passkey", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{BackupEligible: true, BackupState: true}},
		{name: "no user verification", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{UserNotVerified: true}},
		{name: "no user presence", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{UserNotPresent: true}, want: reasonPresence},
		{name: "backed up without eligibility", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{BackupState: true},
			want: "Backup State Flag is true but Backup Eligible flag is false which is invalid"},
		{name: "foreign origin", rp: other(func(r *virtualwebauthn.RelyingParty) { r.Origin = "https://evil.test" }), want: reasonOrigin},
		{name: "foreign RP ID", rp: other(func(r *virtualwebauthn.RelyingParty) { r.ID = "evil.test" }), want: "RP Hash mismatch"},
		{name: "other challenge", rp: honest(), session: func(s *webauthn.SessionData) { s.Challenge = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }, want: reasonChallenge},
		{name: "ceremony type of a sign-in", rp: honest(), tamper: clientData("type", "webauthn.get"), want: "Error validating ceremony type"},
		{name: "cross-origin", rp: honest(), tamper: clientData("crossOrigin", true), want: "Error validating cross origin flag"},
		{name: "top origin", rp: honest(), tamper: clientData("topOrigin", "https://evil.test"), want: "Error validating topOrigin"},
		{name: "tampered client data", rp: honest(), tamper: flipInField("clientDataJSON"), want: "*"},
		{name: "tampered attestation", rp: honest(), tamper: flipInField("attestationObject"), want: "*"},
	}
	for _, kind := range kinds {
		for _, c := range cases {
			t.Run(string(kind)+"/"+c.name, func(t *testing.T) {
				_, err := register(t, rp, c, softCredential(kind))
				c.judge(t, err)
			})
		}
	}
}

// register runs one registration ceremony of c with cred.
func register(t *testing.T, rp *passkey.RP, c ceremony, cred virtualwebauthn.Credential) (*webauthn.Credential, error) {
	t.Helper()
	creation, sess, err := rp.BeginRegistration(ada, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(creation)
	opts, err := virtualwebauthn.ParseAttestationOptions(string(raw))
	if err != nil {
		t.Fatalf("options: %v", err)
	}
	body := []byte(virtualwebauthn.CreateAttestationResponse(c.rp, virtualwebauthn.NewAuthenticatorWithOptions(c.auth), cred, *opts))
	if c.tamper != nil {
		body = c.tamper(body)
	}
	if c.session != nil {
		c.session(sess)
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(body)
	if err != nil {
		return nil, err
	}
	return rp.FinishRegistration(ada, *sess, parsed)
}

func TestAssertionRefusals(t *testing.T) {
	rp := mustRP(t, rpID, origin)
	backedUp := virtualwebauthn.AuthenticatorOptions{BackupEligible: true, BackupState: true}
	cases := []struct {
		ceremony
		registeredWith virtualwebauthn.AuthenticatorOptions
		stored         func(c *webauthn.Credential) // the credential as stored
		stranger       bool                         // signed by another key under the registered id
	}{
		{ceremony: ceremony{name: "honest", rp: honest()}},
		{ceremony: ceremony{name: "backed up passkey", rp: honest(), auth: backedUp}, registeredWith: backedUp},
		{ceremony: ceremony{name: "no user verification", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{UserNotVerified: true}}},
		{ceremony: ceremony{name: "no user presence", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{UserNotPresent: true}, want: reasonPresence}},
		{ceremony: ceremony{name: "foreign origin", rp: other(func(r *virtualwebauthn.RelyingParty) { r.Origin = "https://evil.test" }), want: reasonOrigin}},
		{ceremony: ceremony{name: "foreign RP ID", rp: other(func(r *virtualwebauthn.RelyingParty) { r.ID = "evil.test" }), want: "RP Hash mismatch"}},
		{ceremony: ceremony{name: "other challenge", rp: honest(), session: func(s *webauthn.SessionData) { s.Challenge = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }, want: reasonChallenge}},
		{ceremony: ceremony{name: "ceremony type of a registration", rp: honest(), tamper: clientData("type", "webauthn.create"), want: "Error validating ceremony type"}},
		{ceremony: ceremony{name: "cross-origin", rp: honest(), tamper: clientData("crossOrigin", true), want: "Error validating cross origin flag"}},
		{ceremony: ceremony{name: "another user's handle", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{UserHandle: []byte("someone-else")},
			want: "User handle and User ID do not match"}},
		{ceremony: ceremony{name: "credential not allowed", rp: honest(), session: func(s *webauthn.SessionData) { s.AllowedCredentialIDs = [][]byte{[]byte("other")} },
			want: "User does not own all credentials from the allowed credential list"}},
		{ceremony: ceremony{name: "tampered authenticator data", rp: honest(), tamper: flipInField("authenticatorData"), want: "*"}},
		{ceremony: ceremony{name: "tampered signature", rp: honest(), tamper: flipInField("signature"), want: "*"}},
		{ceremony: ceremony{name: "wrong key", rp: honest(), want: "Error validating the assertion signature"}, stranger: true},
		{ceremony: ceremony{name: "backup eligibility gained", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{BackupEligible: true},
			want: "Backup Eligible flag inconsistency detected during login validation"}},
		{ceremony: ceremony{name: "backup eligibility lost", rp: honest(), want: "Backup Eligible flag inconsistency detected during login validation"},
			registeredWith: virtualwebauthn.AuthenticatorOptions{BackupEligible: true}},
		{ceremony: ceremony{name: "backed up without eligibility", rp: honest(), auth: virtualwebauthn.AuthenticatorOptions{BackupState: true},
			want: "Backup State Flag is true but Backup Eligible flag is false which is invalid"}},
		{ceremony: ceremony{name: "sign count did not increase", rp: honest(), want: "the sign count did not increase (possible cloned authenticator)"},
			stored: func(c *webauthn.Credential) { c.Authenticator.SignCount = 7 }},
	}
	for _, kind := range kinds {
		for _, c := range cases {
			t.Run(string(kind)+"/"+c.name, func(t *testing.T) {
				cred := softCredential(kind)
				stored, err := register(t, rp, ceremony{rp: honest(), auth: c.registeredWith}, cred)
				if err != nil {
					t.Fatal(err)
				}
				if c.stored != nil {
					c.stored(stored)
				}
				request, sess, err := rp.BeginLogin(ada, []webauthn.Credential{*stored})
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := json.Marshal(request)
				opts, err := virtualwebauthn.ParseAssertionOptions(string(raw))
				if err != nil {
					t.Fatalf("options: %v", err)
				}
				signer := cred
				if c.stranger {
					signer = softCredential(kind)
					signer.ID = cred.ID
				}
				body := []byte(virtualwebauthn.CreateAssertionResponse(c.rp, virtualwebauthn.NewAuthenticatorWithOptions(c.auth), signer, *opts))
				if c.tamper != nil {
					body = c.tamper(body)
				}
				if c.session != nil {
					c.session(sess)
				}
				parsed, err := protocol.ParseCredentialRequestResponseBytes(body)
				if err == nil {
					_, err = rp.FinishLogin(ada, []webauthn.Credential{*stored}, *sess, parsed)
				}
				c.judge(t, err)
			})
		}
	}
}
