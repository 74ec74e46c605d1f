package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// SignaturePrefix starts every X-Service-Signature value.
const SignaturePrefix = "sha256="

// Sign returns the X-Service-Signature value of body sent at timestamp (the
// X-Service-Signature-Timestamp value): "sha256=" and the hex HMAC-SHA256,
// keyed with secret, of timestamp + "." + body.
func Sign(secret []byte, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return SignaturePrefix + hex.EncodeToString(m.Sum(nil))
}

// Verify reports in constant time whether signature is body's signature at
// timestamp under secret (what a receiver does).
func Verify(secret []byte, timestamp string, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, timestamp, body)), []byte(signature))
}
