// Package clock injects time. Anything that expires reads Clock.Now, so tests move
// time instead of sleeping.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time.
type Clock interface{ Now() time.Time }

// System is the real clock, in UTC.
type System struct{}

// Now returns the current UTC time.
func (System) Now() time.Time { return time.Now().UTC() }

// Fake is a settable clock for tests. The zero value starts at the Unix epoch.
type Fake struct {
	mu sync.Mutex
	t  time.Time
}

// NewFake returns a fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{t: t.UTC()} }

// Now returns the fake time.
func (f *Fake) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }

// Advance moves the fake time forward by d.
func (f *Fake) Advance(d time.Duration) { f.mu.Lock(); f.t = f.t.Add(d); f.mu.Unlock() }

// Set sets the fake time.
func (f *Fake) Set(t time.Time) { f.mu.Lock(); f.t = t.UTC(); f.mu.Unlock() }

// Format renders t as RFC 3339 UTC with milliseconds, the API's time format.
func Format(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// Stamp renders t with fixed-width nanoseconds, so stamps compare correctly as
// strings (sort keys, "issued after" checks). RFC3339Nano trims zeros and does not.
func Stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }
