package webauthn

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// es256 is the credential key of the W3C "none ES256" vector.
const es256 = "a5010203262001215820afefa16f97ca9b2d23eb86ccb64098d20db90856062eb249c33a9b672f26df61225820930a56b87a2fca66334b03458abf879717c12cc68ed73290af2e2664796b9220"

func coseKey(t *testing.T, m map[int]any) []byte {
	t.Helper()
	b, err := cbor.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseKeyRefusals(t *testing.T) {
	good, _ := hex.DecodeString(es256)
	if k, err := parseKey(good); err != nil || k.alg != AlgES256 {
		t.Fatalf("ES256 key: %v", err)
	}
	x, y := good[10:42], good[45:77]
	short := make([]byte, 255)
	short[0] = 0xc5
	for name, c := range map[string]struct {
		key  []byte
		want string
	}{
		"31-byte coordinate":           {coseKey(t, map[int]any{1: 2, 3: -7, -1: 1, -2: x[1:], -3: y}), "EC2 key coordinates must have 32 bytes"},
		"curve and algorithm disagree": {coseKey(t, map[int]any{1: 2, 3: -35, -1: 1, -2: x, -3: y}), "unsupported EC2 key (curve 1, algorithm -35)"},
		"point off the curve":          {coseKey(t, map[int]any{1: 2, 3: -7, -1: 1, -2: x, -3: x}), "EC2 key is not a point of its curve"},
		"no algorithm":                 {coseKey(t, map[int]any{1: 2, -1: 1, -2: x, -3: y}), "credential public key lacks its type or algorithm"},
		"unknown key type":             {coseKey(t, map[int]any{1: 4, 3: -7}), "unsupported key type 4"},
		"Ed448":                        {coseKey(t, map[int]any{1: 1, 3: -8, -1: 7, -2: make([]byte, 57)}), "unsupported OKP key (curve 7, algorithm -8)"},
		"RSA under 2048 bits":          {coseKey(t, map[int]any{1: 3, 3: -257, -1: short, -2: []byte{1, 0, 1}}), "RSA key must have a 2048- to 4096-bit modulus"},
		"RSA SHA-1":                    {coseKey(t, map[int]any{1: 3, 3: -65535, -1: short, -2: []byte{1, 0, 1}}), "unsupported RSA algorithm -65535"},
		"trailing bytes":               {append(bytes.Clone(good), 0), "credential public key is not a COSE key"},
		"duplicate label":              {[]byte{0xa2, 0x01, 0x02, 0x01, 0x02}, "credential public key is not a COSE key"},
		"indefinite map":               {[]byte{0xbf, 0x01, 0x02, 0xff}, "credential public key is not a COSE key"},
		"not CBOR":                     {[]byte("{}"), "credential public key is not a COSE key"},
	} {
		if _, err := parseKey(c.key); Reason(err) != c.want {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// authenticatorData builds authenticator data for rpID with attested data.
func authenticatorData(flags Flags, credID, key []byte, trailer ...byte) []byte {
	h := sha256.Sum256([]byte("example.org"))
	b := append(h[:], byte(flags), 0, 0, 0, 1)
	if flags&FlagAttestedData != 0 {
		b = append(b, make([]byte, 16)...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(credID)))
		b = append(append(b, credID...), key...)
	}
	return append(b, trailer...)
}

func TestParseAuthData(t *testing.T) {
	key, _ := hex.DecodeString(es256)
	id := []byte("credential")
	a, err := parseAuthData(authenticatorData(FlagUserPresent|FlagAttestedData|FlagExtensions, id, key, 0xa0))
	if err != nil || !bytes.Equal(a.credID, id) || !bytes.Equal(a.credKey, key) || a.signCount != 1 {
		t.Fatalf("parse: %+v %v", a, err)
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"too short":               {make([]byte, 36), "authenticator data is too short"},
		"trailing bytes":          {authenticatorData(FlagUserPresent|FlagAttestedData, id, key, 0), "authenticator data has trailing bytes"},
		"credential id too long":  {authenticatorData(FlagUserPresent|FlagAttestedData, make([]byte, 1024), key), "credential id length is invalid"},
		"empty credential id":     {authenticatorData(FlagUserPresent|FlagAttestedData, nil, key), "credential id length is invalid"},
		"truncated attested data": {authenticatorData(FlagUserPresent|FlagAttestedData, id, key)[:45], "attested credential data is too short"},
		"extensions not a map":    {authenticatorData(FlagUserPresent|FlagExtensions, nil, nil, 0x01), "authenticator extensions are not a CBOR map"},
		"backed up, not eligible": {authenticatorData(FlagUserPresent|FlagBackedUp, nil, nil), "backed up but not backup eligible"},
	} {
		if _, err := parseAuthData(c.data); Reason(err) != c.want {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestParseRefusesMalformedResponses(t *testing.T) {
	for name, c := range map[string]struct {
		body string
		want string
	}{
		"not JSON":          {`[`, "body is not a credential object"},
		"no id":             {`{"rawId":"AQ","type":"public-key"}`, "id and rawId are required"},
		"wrong type":        {`{"id":"AQ","rawId":"AQ","type":"password"}`, `type must be "public-key"`},
		"ids differ":        {`{"id":"AQ","rawId":"Ag","type":"public-key"}`, "id and rawId differ"},
		"not base64url":     {`{"id":"A+","rawId":"A+","type":"public-key"}`, "rawId is not base64url"},
		"no client data":    {`{"id":"AQ","rawId":"AQ","type":"public-key","response":{"attestationObject":"oA"}}`, "clientDataJSON is not JSON client data"},
		"no attestation":    {`{"id":"AQ","rawId":"AQ","type":"public-key","response":{"clientDataJSON":"e30"}}`, "attestationObject is required"},
		"attestation empty": {`{"id":"AQ","rawId":"AQ","type":"public-key","response":{"clientDataJSON":"e30","attestationObject":"oA"}}`, "attestationObject is not an attestation object"},
	} {
		if _, err := ParseRegistration([]byte(c.body)); Reason(err) != c.want {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	body, _ := json.Marshal(map[string]any{"id": "AQ", "rawId": "AQ", "type": "public-key",
		"response": map[string]string{"clientDataJSON": "e30", "authenticatorData": b64(make([]byte, 37))}})
	if _, err := ParseAssertion(body); Reason(err) != "signature is required" {
		t.Errorf("assertion without a signature: %v", err)
	}
}

// Fuzzing: no input panics, and what parses has the lengths WebAuthn allows.
func FuzzParseRegistration(f *testing.F) {
	f.Add([]byte(`{"id":"AQ","rawId":"AQ","type":"public-key","response":{"clientDataJSON":"e30","attestationObject":"oA"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRegistration(body)
		if err == nil && (len(r.id) == 0 || len(r.id) > MaxCredentialIDLength || r.auth == nil) {
			t.Fatalf("parsed %+v", r)
		}
	})
}

func FuzzParseAssertion(f *testing.F) {
	f.Add([]byte(`{"id":"AQ","rawId":"AQ","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","signature":"AQ"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := ParseAssertion(body)
		if err == nil && (len(a.signature) == 0 || a.auth == nil) {
			t.Fatalf("parsed %+v", a)
		}
	})
}

func FuzzAuthDataAndKey(f *testing.F) {
	key, _ := hex.DecodeString(es256)
	f.Add(authenticatorData(FlagUserPresent|FlagAttestedData, []byte("id"), key))
	f.Add(key)
	f.Fuzz(func(t *testing.T, b []byte) {
		if a, err := parseAuthData(b); err == nil && a.credKey != nil {
			_, _ = parseKey(a.credKey)
		}
		if k, err := parseKey(b); err == nil {
			k.verify(b, b)
		}
	})
}

func TestNewChecksTheRelyingParty(t *testing.T) {
	rp, err := New("gale.test", "", []string{"https://gale.test/", "http://localhost:8080"}, 0)
	if err != nil || rp.Name != "gale.test" || rp.Origins[0] != "https://gale.test" || rp.Origins[1] != "http://localhost:8080" {
		t.Fatalf("New: %+v, %v", rp, err)
	}
	for _, c := range []struct {
		id      string
		origins []string
	}{{"", []string{"https://gale.test"}}, {"https://gale.test", []string{"https://gale.test"}},
		{"gale.test", nil}, {"gale.test", []string{"gale.test"}}, {"gale.test", []string{"https://gale.test/login"}}} {
		if _, err := New(c.id, "Gale", c.origins, 0); err == nil {
			t.Errorf("New(%q, %q) accepted", c.id, c.origins)
		}
	}
}
