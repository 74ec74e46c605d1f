package store

// SetToken makes every write use token until the returned func restores the
// generator (tests that replay a write whose answer was lost).
func SetToken(token string) (restore func()) {
	prev := newToken
	newToken = func() string { return token }
	return func() { newToken = prev }
}

// SetBackfillScanLimit bounds Backfill's scan pages to n items until the
// returned func restores them.
func SetBackfillScanLimit(n int32) (restore func()) {
	prev := backfillScanLimit
	backfillScanLimit = n
	return func() { backfillScanLimit = prev }
}
