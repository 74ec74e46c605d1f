package attempt

// SetToken makes f the source of count tokens until the returned restore is
// called (a test resends a count as a retry after a lost answer would).
func SetToken(f func() string) (restore func()) {
	old := newToken
	newToken = f
	return func() { newToken = old }
}
