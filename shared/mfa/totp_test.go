package mfa

import (
	"encoding/json"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"

	"github.com/gale-rmm/gale/shared/secret"
)

type goldenFile struct {
	TOTP struct {
		SecretBase32 string `json:"secretBase32"`
		Vectors      []struct {
			Time  int64  `json:"time"`
			Step  int64  `json:"step"`
			Code8 string `json:"code8"`
			Code6 string `json:"code6"`
		} `json:"vectors"`
	} `json:"totp"`
	Hashes struct {
		Master  string `json:"master"`
		Label   string `json:"label"`
		Vectors []struct {
			Parts []string `json:"parts"`
			Hash  string   `json:"hash"`
		} `json:"vectors"`
	} `json:"hashes"`
}

func golden(t *testing.T) goldenFile {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.TOTP.Vectors) == 0 || len(g.Hashes.Vectors) == 0 {
		t.Fatal("testdata/vectors.json holds no vectors")
	}
	return g
}

// RFC 6238 Appendix B, SHA-1 rows: the 8-digit codes, and their last six digits
// as the 6-digit codes Gale accepts.
func TestTOTPGoldenVectors(t *testing.T) {
	g := golden(t)
	for _, v := range g.TOTP.Vectors {
		at := time.Unix(v.Time, 0)
		if s := timeStep(at); s != v.Step {
			t.Fatalf("step(%d) = %d, want %d", v.Time, s, v.Step)
		}
		c8, err := codeAt(g.TOTP.SecretBase32, v.Step, otp.DigitsEight)
		if err != nil || c8 != v.Code8 {
			t.Errorf("T=%d: 8-digit code %s, %v; want %s", v.Time, c8, err, v.Code8)
		}
		step, ok, err := matchTOTP(g.TOTP.SecretBase32, v.Code6, at, 0)
		if err != nil || !ok || step != v.Step {
			t.Errorf("T=%d: match(%s) = %d, %v, %v; want step %d", v.Time, v.Code6, step, ok, err, v.Step)
		}
	}
}

func TestTOTPWindowAndReplay(t *testing.T) {
	g := golden(t)
	v := g.TOTP.Vectors[3] // T=1234567890
	at := time.Unix(v.Time, 0)
	// One step of skew either side is accepted, two is not.
	for _, d := range []time.Duration{-30 * time.Second, 0, 30 * time.Second} {
		if _, ok, _ := matchTOTP(g.TOTP.SecretBase32, v.Code6, at.Add(d), 0); !ok {
			t.Errorf("code refused at skew %v", d)
		}
	}
	for _, d := range []time.Duration{-61 * time.Second, 61 * time.Second} {
		if _, ok, _ := matchTOTP(g.TOTP.SecretBase32, v.Code6, at.Add(d), 0); ok {
			t.Errorf("code accepted at skew %v", d)
		}
	}
	// Accepted once: a step at or before the last accepted one is refused.
	if _, ok, _ := matchTOTP(g.TOTP.SecretBase32, v.Code6, at, v.Step); ok {
		t.Error("replayed step accepted")
	}
	if _, ok, _ := matchTOTP(g.TOTP.SecretBase32, v.Code6, at, v.Step-1); !ok {
		t.Error("fresh step refused")
	}
	if _, ok, _ := matchTOTP(g.TOTP.SecretBase32, "000000", at, 0); ok && v.Code6 != "000000" {
		t.Error("wrong code accepted")
	}
}

func TestCodeHashGoldenVectors(t *testing.T) {
	g := golden(t)
	h := codeHasher{key: secret.Derive([]byte(g.Hashes.Master), g.Hashes.Label)}
	for _, v := range g.Hashes.Vectors {
		if got := h.hash(v.Parts...); got != v.Hash {
			t.Errorf("hash(%q) = %s, want %s", v.Parts, got, v.Hash)
		}
	}
	if h.recovery("ABCDEFGH") != g.Hashes.Vectors[0].Hash {
		t.Error("recovery hash differs from its vector")
	}
}

func TestRecoveryCodes(t *testing.T) {
	codes, err := newRecoveryCodes()
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) != 10 {
		t.Fatalf("%d codes", len(codes))
	}
	format := regexp.MustCompile(`^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$`)
	seen := map[string]bool{}
	for _, c := range codes {
		if !format.MatchString(c) || seen[c] {
			t.Fatalf("code %q (duplicate %v)", c, seen[c])
		}
		seen[c] = true
	}
	h := codeHasher{key: []byte("k")}
	stored := h.recoveryHashes(codes)
	for i, c := range codes {
		for _, typed := range []string{c, strings.ToLower(c), strings.ReplaceAll(c, "-", ""), " " + c[:4] + " " + c[5:] + " "} {
			n, ok := normalizeRecovery(typed)
			if !ok || findRecovery(stored, h.recovery(n)) != i {
				t.Fatalf("typed %q not found at %d", typed, i)
			}
		}
	}
	stored[2] = usedCode
	if n, _ := normalizeRecovery(codes[2]); findRecovery(stored, h.recovery(n)) != -1 {
		t.Fatal("spent code still found")
	}
	if liveCodes(stored) != 9 {
		t.Fatalf("live = %d", liveCodes(stored))
	}
	for _, bad := range []string{"", "ABCD-EFG", "ABCD-EFGHI", "ABCD-EFG0", "ABCD-EFGI", "123456"} {
		if _, ok := normalizeRecovery(bad); ok {
			t.Errorf("%q read as a recovery code", bad)
		}
	}
}

func TestSetupKeyAndQRCode(t *testing.T) {
	k, err := newKey("alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(k.URL())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Scheme != "otpauth" || u.Host != "totp" || q.Get("issuer") != "Gale" || q.Get("digits") != "6" ||
		q.Get("period") != "30" || q.Get("algorithm") != "SHA1" || q.Get("secret") != k.Secret() || len(k.Secret()) != 32 {
		t.Fatalf("otpauth url %s", k.URL())
	}
	if !strings.HasPrefix(u.Path, "/Gale:alice@example.com") {
		t.Fatalf("label %s", u.Path)
	}
	qr, err := qrDataURL(k)
	if err != nil || !strings.HasPrefix(qr, "data:image/png;base64,iVBORw0KGgo") {
		t.Fatalf("qr %.40s, %v", qr, err)
	}
}

func TestSmallHelpers(t *testing.T) {
	if maskPhone("+14155550123") != "+*********23" {
		t.Fatalf("mask = %s", maskPhone("+14155550123"))
	}
	for i := 0; i < 50; i++ {
		c, err := digits(6)
		if err != nil || !isDigits(c, 6) {
			t.Fatalf("digits = %q, %v", c, err)
		}
	}
	if isDigits("12345", 6) || isDigits("12345a", 6) || !isDigits("012345", 6) {
		t.Fatal("isDigits")
	}
}
