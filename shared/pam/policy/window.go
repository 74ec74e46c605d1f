package policy

import (
	"time"
)

// window is a compiled TimeWindow.
type window struct {
	bad        bool // malformed: never active
	start, end int  // minutes of the day
	days       uint8
	loc        *time.Location
}

// zones caches loaded zones during one compilation.
type zones map[string]*time.Location

// compileWindow compiles w; nil means no window (always active). zs may be
// nil (no cache).
func compileWindow(w *TimeWindow, zs zones) *window {
	if w == nil {
		return nil
	}
	cw := &window{loc: time.UTC}
	var ok1, ok2 bool
	cw.start, ok1 = parseHHMM(w.Start)
	cw.end, ok2 = parseHHMM(w.End)
	if !ok1 || !ok2 {
		return &window{bad: true}
	}
	for _, d := range w.Days {
		if d < 0 || d > 6 {
			return &window{bad: true}
		}
		cw.days |= 1 << d
	}
	if w.Timezone != "" {
		loc, ok := zs[w.Timezone]
		if !ok {
			if loc, ok = loadZone(w.Timezone); !ok {
				return &window{bad: true}
			}
			if zs != nil {
				zs[w.Timezone] = loc
			}
		}
		cw.loc = loc
	}
	return cw
}

// loadZone loads an IANA zone; "Local" (the machine's zone) is refused.
func loadZone(name string) (*time.Location, bool) {
	if name == "Local" || name == "" {
		return nil, false
	}
	loc, err := time.LoadLocation(name)
	return loc, err == nil
}

// parseHHMM parses a strict 24-hour HH:MM into minutes of the day.
func parseHHMM(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	m := int(s[3]-'0')*10 + int(s[4]-'0')
	if h > 23 || m > 59 {
		return 0, false
	}
	return h*60 + m, true
}

// active reports whether the window is open at the instant of clk.
func (w *window) active(clk *clock) bool {
	if w == nil {
		return true
	}
	if w.bad {
		return false
	}
	m, day := clk.local(w.loc)
	switch {
	case w.start <= w.end:
		if m < w.start || m > w.end {
			return false
		}
	case m >= w.start:
		// the evening part of a window that wraps midnight
	case m <= w.end:
		day = (day + 6) % 7 // the morning part belongs to the day it opened
	default:
		return false
	}
	return w.days == 0 || w.days&(1<<day) != 0
}

// clock is one instant read in the zones of a chain's windows; it remembers
// the last zone, as a chain's rules mostly share one.
type clock struct {
	now     time.Time
	loc     *time.Location
	min     int
	weekday int
}

// local returns the minute of the day and the weekday of the instant in loc.
func (c *clock) local(loc *time.Location) (int, int) {
	if c.loc != loc || c.loc == nil {
		t := c.now.In(loc)
		h, m, _ := t.Clock()
		c.loc, c.min, c.weekday = loc, h*60+m, int(t.Weekday())
	}
	return c.min, c.weekday
}
