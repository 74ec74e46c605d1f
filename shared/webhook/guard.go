package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// Resolver resolves host names; *net.Resolver satisfies it. Tests inject one
// to change answers between validation and delivery (DNS rebinding).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides which destinations a webhook may have. A URL is checked when a
// webhook is created or changed (Validate: form, host name rules, every address
// its name resolves to) and again at every delivery attempt inside the dialer,
// on the addresses actually dialled after resolution (DialContext, and the
// dialer's Control hook as a second check), so a name that resolves to a public
// address at validation and to a private one at delivery never gets a request.
//
// Blocked: 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24,
// 192.0.2/24, 192.168/16, 198.18/15, 198.51.100/24, 203.0.113/24, 224/4, 240/4;
// ::/96 (unspecified, loopback, IPv4-compatible), 100::/64, 2001:db8::/32,
// fc00::/7, fe80::/10, fec0::/10, ff00::/8, 64:ff9b:1::/48; IPv4-mapped
// (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses whose
// embedded IPv4 address is blocked. Host names localhost, *.localhost, *.local
// and single-label names are refused, and so is an IPv4 address written in any
// form but canonical dotted decimal (one integer, hex, octal, zero-padded or
// fewer than four parts): resolvers disagree on what those mean.
type Guard struct {
	// Allow lists prefixes exempt from the blocked ranges (WEBHOOK_ALLOW_CIDRS;
	// tests and local runs only: the deployed stack never sets it).
	Allow []netip.Prefix
	// Resolver resolves names; nil means net.DefaultResolver.
	Resolver Resolver
}

// NewGuard parses the allowed CIDRs (WEBHOOK_ALLOW_CIDRS).
func NewGuard(allow []string) (*Guard, error) {
	g := &Guard{}
	for _, c := range allow {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, fmt.Errorf("webhook: WEBHOOK_ALLOW_CIDRS entry %q: %w", c, err)
		}
		g.Allow = append(g.Allow, p.Masked())
	}
	return g, nil
}

// URLError says why a URL is refused; Reason is shown in the error details.
type URLError struct{ Reason string }

func (e *URLError) Error() string { return "invalid webhook URL: " + e.Reason }

// UnsafeError is a delivery refused by the dialer: the destination resolved to
// a blocked address (or failed the URL rules). No request was sent.
type UnsafeError struct{ Addr string }

func (e *UnsafeError) Error() string { return "unsafe webhook destination " + e.Addr }

func refuse(format string, args ...any) error { return &URLError{Reason: fmt.Sprintf(format, args...)} }

// MaxURL is the longest webhook URL accepted.
const MaxURL = 2048

var blocked4 = prefixes("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
	"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
	"224.0.0.0/4", "240.0.0.0/4")

var blocked6 = prefixes("::/96", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8", "64:ff9b:1::/48")

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	mapped4 = netip.MustParsePrefix("::ffff:0:0/96")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Blocked reports whether a may not be a webhook destination.
func (g *Guard) Blocked(a netip.Addr) bool {
	a = a.WithZone("")
	for _, p := range g.Allow {
		if p.Contains(a) || (a.Is4In6() && p.Contains(a.Unmap())) {
			return false
		}
	}
	return BlockedAddr(a)
}

// BlockedAddr reports whether a is in a blocked range (no exemptions).
func BlockedAddr(a netip.Addr) bool {
	a = a.WithZone("")
	if !a.IsValid() {
		return true
	}
	if a.Is4() {
		return in(blocked4, a)
	}
	if mapped4.Contains(a) {
		return in(blocked4, a.Unmap())
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return in(blocked4, netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixTo4.Contains(a):
		return in(blocked4, netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	return in(blocked6, a)
}

func in(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// target is a URL that passed the form rules.
type target struct {
	u    *url.URL
	host string     // lower case, without a trailing dot or brackets
	ip   netip.Addr // valid when host is an address literal
}

// parse applies the rules that need no network: HTTPS, an absolute URL with a
// host, the host name rules and the canonical IPv4 rule, and the blocked
// ranges for an address literal.
func (g *Guard) parse(raw string) (*target, error) {
	if raw == "" {
		return nil, refuse("is required")
	}
	if len(raw) > MaxURL {
		return nil, refuse("must be at most %d characters", MaxURL)
	}
	if strings.IndexFunc(raw, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0 {
		return nil, refuse("must not contain spaces or control characters")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, refuse("is not a valid URL")
	}
	if u.Scheme != "https" {
		return nil, refuse("must use https")
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, refuse("must be an absolute URL with a host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 || p[0] == '0' {
			return nil, refuse("port must be 1-65535")
		}
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimSuffix(host, ".")
	t := &target{u: u, host: host}
	switch {
	case host == "":
		return nil, refuse("must have a host")
	case strings.Contains(host, ":"):
		a, err := netip.ParseAddr(host)
		if err != nil || a.Zone() != "" {
			return nil, refuse("host is not a valid IPv6 address")
		}
		t.ip = a
	case endsInNumber(host):
		a, ok := canonicalIPv4(host)
		if !ok {
			return nil, refuse("host must be a DNS name or an IPv4 address in canonical dotted-decimal form")
		}
		t.ip = a
	default:
		if err := hostName(host); err != nil {
			return nil, err
		}
	}
	if t.ip.IsValid() && g.Blocked(t.ip) {
		return nil, refuse("host is a private, loopback, link-local or otherwise blocked address")
	}
	return t, nil
}

// endsInNumber reports whether a URL parser would read host as an IPv4 address
// (the WHATWG rule): its last label is decimal digits or 0x and hex digits.
func endsInNumber(host string) bool {
	last := host[strings.LastIndex(host, ".")+1:]
	if last == "" {
		return false
	}
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(h, "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// canonicalIPv4 accepts only a.b.c.d with each part 0-255 in decimal without
// leading zeros.
func canonicalIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) != 4 {
		return netip.Addr{}, false
	}
	var b [4]byte
	for i, p := range parts {
		if p == "" || len(p) > 3 || (len(p) > 1 && p[0] == '0') || strings.Trim(p, "0123456789") != "" {
			return netip.Addr{}, false
		}
		n, _ := strconv.Atoi(p)
		if n > 255 {
			return netip.Addr{}, false
		}
		b[i] = byte(n)
	}
	return netip.AddrFrom4(b), true
}

// hostName checks an ASCII DNS name (internationalised names in punycode).
func hostName(host string) error {
	if len(host) > 253 {
		return refuse("host name is too long")
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") {
		return refuse("host %s is a local name", host)
	}
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return refuse("host name must be fully qualified")
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return refuse("host name is not a valid DNS name")
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return refuse("host name must be ASCII letters, digits and hyphens (use punycode)")
			}
		}
	}
	return nil
}

func (g *Guard) resolver() Resolver {
	if g.Resolver != nil {
		return g.Resolver
	}
	return net.DefaultResolver
}

// resolveTimeout bounds the DNS lookup of Validate.
const resolveTimeout = 5 * time.Second

// Validate checks raw for a create or update: the form rules, then every
// address the host resolves to. A *URLError says why it is refused.
func (g *Guard) Validate(ctx context.Context, raw string) error {
	t, err := g.parse(raw)
	if err != nil {
		return err
	}
	if t.ip.IsValid() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := g.resolver().LookupNetIP(ctx, "ip", t.host)
	if err != nil || len(addrs) == 0 {
		return refuse("host %s does not resolve", t.host)
	}
	for _, a := range addrs {
		if g.Blocked(a) {
			return refuse("host %s resolves to a blocked address", t.host)
		}
	}
	return nil
}

// CheckNow is the check before each delivery attempt: the form rules, then the
// host's current addresses. A blocked answer (or a URL the rules refuse) is an
// UnsafeError; a failed lookup is returned as is (the attempt fails and is
// retried). The dialer checks again the address it connects to, so a new
// connection made after this lookup cannot reach a blocked address either;
// a kept-alive connection goes to an address checked when it was dialled.
func (g *Guard) CheckNow(ctx context.Context, raw string) error {
	t, err := g.parse(raw)
	if err != nil {
		return &UnsafeError{Addr: "url"}
	}
	if t.ip.IsValid() {
		return nil
	}
	addrs, err := g.resolver().LookupNetIP(ctx, "ip", t.host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if g.Blocked(a) {
			return &UnsafeError{Addr: a.String()}
		}
	}
	return nil
}

// DialContext resolves addr's host once, refuses the dial when any answer is
// blocked (an UnsafeError, before any connection), and dials the answers in
// turn with Control checking the address actually dialled.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("webhook: port %q: %w", portStr, err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = g.resolver().LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("webhook: %s has no address", host)
	}
	for _, a := range addrs {
		if g.Blocked(a) {
			return nil, &UnsafeError{Addr: a.String()}
		}
	}
	d := net.Dialer{Timeout: 10 * time.Second, Control: g.control}
	var errs []error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err == nil {
			return c, nil
		}
		var unsafe *UnsafeError
		if errors.As(err, &unsafe) {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// control runs after the socket exists and before connect: the last word on
// the address dialled.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &UnsafeError{Addr: address}
	}
	if g.Blocked(ap.Addr()) {
		return &UnsafeError{Addr: ap.Addr().String()}
	}
	return nil
}
