package store

// SetToken makes every write use token until the returned func restores the
// generator (tests that replay a write whose answer was lost).
func SetToken(token string) (restore func()) {
	prev := newToken
	newToken = func() string { return token }
	return func() { newToken = prev }
}
