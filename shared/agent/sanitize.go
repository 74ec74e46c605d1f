package agent

import (
	"strings"
	"unicode"

	"github.com/gale-rmm/gale/shared/device"
)

// Agent strings are stored clean (docs/decisions.md#agent-strings): the names
// an agent reports (hostname, OS version and build, last user, hardware names)
// lose their control characters (C0, DEL, C1), bidirectional formatting
// characters (LRM, RLM, ALM, the embeddings and overrides U+202A-U+202E, the
// isolates U+2066-U+2069) and line and paragraph separators, and are cut to
// their documented length, before validation and storage. Network addresses
// lose the same characters but keep their length check (400): an address cut
// short is a wrong address, not a shorter name.

// Clean returns s without control, bidi-formatting and separator characters,
// cut to at most max characters (max <= 0: not cut).
func Clean(s string, max int) string {
	if max > 0 && len(s) > 4*max {
		s = s[:4*max] // no rune is longer than 4 bytes: bound the work first
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if dropped(r) {
			continue
		}
		if max > 0 && n == max {
			break
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimSpace(b.String())
}

func dropped(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r == 0x061C, r == 0x200E, r == 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// clean cleans *v in place (nil stays nil).
func clean(v *string, max int) {
	if v != nil {
		*v = Clean(*v, max)
	}
}

// cleanHardware cleans the hardware names.
func cleanHardware(h *device.Hardware) {
	if h == nil {
		return
	}
	for _, v := range []*string{h.Manufacturer, h.Model, h.SerialNumber, h.CPUModel, h.GPUModel} {
		clean(v, 255)
	}
}

// cleanNetwork drops control and bidi characters from the addresses.
func cleanNetwork(n *device.Network) {
	if n == nil {
		return
	}
	for _, v := range []*string{n.IPAddress, n.PublicIP, n.MACAddress} {
		clean(v, 0)
	}
}

// sanitize cleans an enrollment's strings.
func (in *EnrollInput) sanitize() {
	clean(in.Hostname, 255)
	clean(in.OSVersion, 100)
	clean(in.OSBuild, 100)
	cleanHardware(in.Hardware)
	cleanNetwork(in.Network)
}

// sanitize cleans a heartbeat's strings.
func (in *HeartbeatInput) sanitize() {
	clean(in.Hostname, 255)
	clean(in.OSVersion, 100)
	clean(in.LastUser, 255)
}
