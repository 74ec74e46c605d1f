package policy

import (
	"time"
	// Zone data is embedded: Lambda's runtime image may have none.
	_ "time/tzdata"
)

// window is a compiled TimeWindow.
type window struct {
	bad        bool // malformed: never active
	start, end int  // minutes of the day
	days       uint8
	loc        *time.Location
}

// compileWindow compiles w; nil means no window (always active).
func compileWindow(w *TimeWindow) *window {
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
		loc, ok := loadZone(w.Timezone)
		if !ok {
			return &window{bad: true}
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

// active reports whether the window is open at now.
func (w *window) active(now time.Time) bool {
	if w == nil {
		return true
	}
	if w.bad {
		return false
	}
	t := now.In(w.loc)
	m := t.Hour()*60 + t.Minute()
	day := int(t.Weekday())
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
