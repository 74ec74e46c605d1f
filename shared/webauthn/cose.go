package webauthn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"math/big"

	"github.com/fxamacker/cbor/v2"
)

// decoder is strict where WebAuthn's CTAP2 canonical CBOR is: definite
// lengths only, no tags, no duplicate map keys, shallow nesting.
var decoder = func() cbor.DecMode {
	dm, err := cbor.DecOptions{
		DupMapKey:        cbor.DupMapKeyEnforcedAPF,
		IndefLength:      cbor.IndefLengthForbidden,
		TagsMd:           cbor.TagsForbidden,
		MaxNestedLevels:  8,
		MaxArrayElements: 64,
		MaxMapPairs:      64,
	}.DecMode()
	if err != nil {
		panic(err) // the options are constants
	}
	return dm
}()

// COSE key parameters (RFC 9052 section 7, RFC 9053 section 7).
const (
	coseKty = 1
	coseAlg = 3
	ktyOKP  = 1
	ktyEC2  = 2
	ktyRSA  = 3
	crvP256 = 1
	crvP384 = 2
	crvP521 = 3
	crvEd   = 6
)

// key is a parsed credential public key.
type key struct {
	alg int
	pub crypto.PublicKey
}

// parseKey parses a COSE_Key, all of b. Its algorithm must be one of ours and
// agree with its key type and curve; EC coordinates have the curve's length.
func parseKey(b []byte) (*key, error) {
	var m map[int]cbor.RawMessage
	rest, err := decoder.UnmarshalFirst(b, &m)
	if err != nil || len(rest) != 0 {
		return nil, refuse("credential public key is not a COSE key")
	}
	kty, okt := intParam(m, coseKty)
	alg, oka := intParam(m, coseAlg)
	if !okt || !oka {
		return nil, refuse("credential public key lacks its type or algorithm")
	}
	switch kty {
	case ktyEC2:
		crv, _ := intParam(m, -1)
		x, y := bytesParam(m, -2), bytesParam(m, -3)
		var curve elliptic.Curve
		var want int
		switch {
		case crv == crvP256 && alg == AlgES256:
			curve, want = elliptic.P256(), 32
		case crv == crvP384 && alg == AlgES384:
			curve, want = elliptic.P384(), 48
		case crv == crvP521 && alg == AlgES512:
			curve, want = elliptic.P521(), 66
		default:
			return nil, refuse("unsupported EC2 key (curve %d, algorithm %d)", crv, alg)
		}
		if len(x) != want || len(y) != want {
			return nil, refuse("EC2 key coordinates must have %d bytes", want)
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil, refuse("EC2 key is not a point of its curve")
		}
		return &key{alg: alg, pub: pub}, nil
	case ktyOKP:
		crv, _ := intParam(m, -1)
		x := bytesParam(m, -2)
		if crv != crvEd || alg != AlgEdDSA || len(x) != ed25519.PublicKeySize {
			return nil, refuse("unsupported OKP key (curve %d, algorithm %d)", crv, alg)
		}
		return &key{alg: alg, pub: ed25519.PublicKey(x)}, nil
	case ktyRSA:
		n, e := bytesParam(m, -1), bytesParam(m, -2)
		if alg != AlgRS256 && alg != AlgPS256 {
			return nil, refuse("unsupported RSA algorithm %d", alg)
		}
		if len(n) < 256 || len(n) > 512 || n[0] == 0 || len(e) == 0 || len(e) > 4 {
			return nil, refuse("RSA key must have a 2048- to 4096-bit modulus")
		}
		exp := int(new(big.Int).SetBytes(e).Int64())
		if exp < 3 || exp%2 == 0 {
			return nil, refuse("RSA key has an invalid exponent")
		}
		return &key{alg: alg, pub: &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: exp}}, nil
	}
	return nil, refuse("unsupported key type %d", kty)
}

// verify checks sig over data with k.
func (k *key) verify(data, sig []byte) bool {
	switch pub := k.pub.(type) {
	case *ecdsa.PublicKey:
		return ecdsa.VerifyASN1(pub, digest(k.alg, data), sig)
	case ed25519.PublicKey:
		return ed25519.Verify(pub, data, sig)
	case *rsa.PublicKey:
		h := digest(k.alg, data)
		if k.alg == AlgPS256 {
			return rsa.VerifyPSS(pub, crypto.SHA256, h, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}) == nil
		}
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, h, sig) == nil
	}
	return false
}

func digest(alg int, data []byte) []byte {
	switch alg {
	case AlgES384:
		h := sha512.Sum384(data)
		return h[:]
	case AlgES512:
		h := sha512.Sum512(data)
		return h[:]
	}
	h := sha256.Sum256(data)
	return h[:]
}

// certAlgorithm is the x509 signature algorithm of a COSE algorithm.
func certAlgorithm(alg int) (x509.SignatureAlgorithm, bool) {
	a, ok := map[int]x509.SignatureAlgorithm{
		AlgES256: x509.ECDSAWithSHA256, AlgES384: x509.ECDSAWithSHA384, AlgES512: x509.ECDSAWithSHA512,
		AlgEdDSA: x509.PureEd25519, AlgRS256: x509.SHA256WithRSA, AlgPS256: x509.SHA256WithRSAPSS,
	}[alg]
	return a, ok
}

func intParam(m map[int]cbor.RawMessage, label int) (int, bool) {
	raw, ok := m[label]
	if !ok {
		return 0, false
	}
	var v int
	if err := decoder.Unmarshal(raw, &v); err != nil {
		return 0, false
	}
	return v, true
}

func bytesParam(m map[int]cbor.RawMessage, label int) []byte {
	var v []byte
	if raw, ok := m[label]; !ok || decoder.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}
