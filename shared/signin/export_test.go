package signin

// SetVerify replaces the password check of Login with f until the returned
// restore is called (tests count and hold verifications with it).
func SetVerify(f func(hash, pw string) bool) (restore func()) {
	old := verify
	verify = f
	return func() { verify = old }
}
