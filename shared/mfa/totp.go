package mfa

import (
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"image/png"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"
)

// TOTP parameters: RFC 6238 with SHA-1, 6 digits and 30-second steps (what every
// authenticator app reads from the otpauth URL), one step of skew either side.
const (
	Issuer     = "Gale"
	totpPeriod = 30
	totpSkew   = 1
	secretSize = 20 // bytes; 160 bits as RFC 4226 recommends
	qrSize     = 256
)

// newKey draws a TOTP secret for account (crypto/rand, inside pquerna/otp).
func newKey(account string) (*otp.Key, error) {
	k, err := totp.Generate(totp.GenerateOpts{Issuer: Issuer, AccountName: account, Period: totpPeriod,
		SecretSize: secretSize, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return nil, fmt.Errorf("generate totp key: %w", err)
	}
	return k, nil
}

// qrDataURL draws k's otpauth URL as a PNG data URL.
func qrDataURL(k *otp.Key) (string, error) {
	img, err := k.Image(qrSize, qrSize)
	if err != nil {
		return "", fmt.Errorf("totp qr code: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return "", fmt.Errorf("totp qr code: %w", err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// timeStep is the RFC 6238 counter of t.
func timeStep(t time.Time) int64 { return t.Unix() / totpPeriod }

// codeAt is the code of base32 secret at counter step.
func codeAt(secret string, step int64, digits otp.Digits) (string, error) {
	c, err := hotp.GenerateCodeCustom(secret, uint64(step), hotp.ValidateOpts{Digits: digits, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return "", fmt.Errorf("totp code: %w", err)
	}
	return c, nil
}

// matchTOTP returns the earliest time step within totpSkew of now whose code is
// code and which is later than last (the step last accepted: a code is accepted
// at most once). Every candidate is computed and compared in constant time.
func matchTOTP(secret, code string, now time.Time, last int64) (int64, bool, error) {
	cur := timeStep(now)
	var found int64
	ok := false
	for s := cur - totpSkew; s <= cur+totpSkew; s++ {
		want, err := codeAt(secret, s, otp.DigitsSix)
		if err != nil {
			return 0, false, err
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && s > last && !ok {
			found, ok = s, true
		}
	}
	return found, ok, nil
}
