package secret

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

type vectors struct {
	Box []struct {
		Key       string `json:"key"`
		Nonce     string `json:"nonce"`
		Context   string `json:"context"`
		Plaintext string `json:"plaintext"`
		Sealed    string `json:"sealed"`
	} `json:"box"`
	Derive []struct {
		Master string `json:"master"`
		Label  string `json:"label"`
		Key    string `json:"key"`
	} `json:"derive"`
}

func load(t *testing.T) vectors {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Box) == 0 || len(v.Derive) == 0 {
		t.Fatal("testdata/vectors.json holds no vectors")
	}
	return v
}

// The vectors were computed with Python's cryptography (AESGCM), not with this code.
func TestBoxGoldenVectors(t *testing.T) {
	for _, v := range load(t).Box {
		b, err := New([]byte(v.Key))
		if err != nil {
			t.Fatal(err)
		}
		nonce, err := hex.DecodeString(v.Nonce)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.seal(nonce, []byte(v.Plaintext), v.Context); got != v.Sealed {
			t.Errorf("seal(%q) = %s, want %s", v.Plaintext, got, v.Sealed)
		}
		pt, err := b.Open(v.Sealed, v.Context)
		if err != nil || string(pt) != v.Plaintext {
			t.Errorf("open(%s) = %q, %v; want %q", v.Sealed, pt, err, v.Plaintext)
		}
	}
}

func TestDeriveGoldenVectors(t *testing.T) {
	for _, v := range load(t).Derive {
		if got := hex.EncodeToString(Derive([]byte(v.Master), v.Label)); got != v.Key {
			t.Errorf("Derive(%q, %q) = %s, want %s", v.Master, v.Label, got, v.Key)
		}
	}
}

func TestSealUsesFreshNoncesAndRoundTrips(t *testing.T) {
	b, err := New([]byte("key"))
	if err != nil {
		t.Fatal(err)
	}
	a1, err := b.Seal([]byte("JBSWY3DPEHPK3PXP"), "totp:u1")
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := b.Seal([]byte("JBSWY3DPEHPK3PXP"), "totp:u1")
	if a1 == a2 {
		t.Fatal("two seals of one value are equal: nonce reused")
	}
	if strings.Contains(a1, "JBSWY3DPEHPK3PXP") || !strings.HasPrefix(a1, "v1.") {
		t.Fatalf("sealed value %q", a1)
	}
	for _, s := range []string{a1, a2} {
		if pt, err := b.Open(s, "totp:u1"); err != nil || string(pt) != "JBSWY3DPEHPK3PXP" {
			t.Fatalf("open = %q, %v", pt, err)
		}
	}
}

func TestOpenRefusals(t *testing.T) {
	b, _ := New([]byte("key"))
	other, _ := New([]byte("another key"))
	sealed, err := b.Seal([]byte("seed"), "totp:u1")
	if err != nil {
		t.Fatal(err)
	}
	flip := []byte(sealed)
	flip[len(flip)-3] ^= 'A' ^ 'B'
	if flip[len(flip)-3] == sealed[len(sealed)-3] {
		flip[len(flip)-3] = 'Z'
	}
	cases := map[string]struct {
		box    *Box
		sealed string
		ctx    string
	}{
		"other context":   {b, sealed, "totp:u2"},
		"other key":       {other, sealed, "totp:u1"},
		"tampered":        {b, string(flip), "totp:u1"},
		"no version":      {b, strings.TrimPrefix(sealed, "v1."), "totp:u1"},
		"not base64":      {b, "v1.!!!", "totp:u1"},
		"too short":       {b, "v1.AAAA", "totp:u1"},
		"empty":           {b, "", "totp:u1"},
		"unknown version": {b, "v2." + strings.TrimPrefix(sealed, "v1."), "totp:u1"},
	}
	for name, c := range cases {
		if _, err := c.box.Open(c.sealed, c.ctx); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: err = %v, want ErrOpen", name, err)
		}
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil) accepted an empty key")
	}
}

// TestRotation: after a rotation the new key seals and values sealed under the
// previous key still open; once the previous key is retired they do not.
func TestRotation(t *testing.T) {
	oldBox, err := New([]byte("old-key"))
	if err != nil {
		t.Fatal(err)
	}
	sealedOld, err := oldBox.Seal([]byte("seed"), "totp:u1")
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := New([]byte("new-key"), []byte("old-key"))
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := rotated.Open(sealedOld, "totp:u1"); err != nil || string(pt) != "seed" {
		t.Fatalf("rotated box opens the old value: %q %v", pt, err)
	}
	if _, err := rotated.Open(sealedOld, "totp:u2"); err == nil {
		t.Fatal("the previous key ignores the context")
	}
	sealedNew, err := rotated.Seal([]byte("seed"), "totp:u1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oldBox.Open(sealedNew, "totp:u1"); err == nil {
		t.Fatal("the rotated box sealed with the previous key")
	}
	retired, err := New([]byte("new-key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := retired.Open(sealedOld, "totp:u1"); err == nil {
		t.Fatal("a retired key still opens")
	}
	if pt, err := retired.Open(sealedNew, "totp:u1"); err != nil || string(pt) != "seed" {
		t.Fatalf("new value: %q %v", pt, err)
	}
	if _, err := New([]byte("k"), nil); err == nil {
		t.Fatal("an empty previous key accepted")
	}
}
