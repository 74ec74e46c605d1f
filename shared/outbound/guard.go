// Package outbound is the one way Gale reaches a URL that a tenant chose:
// webhook deliveries and single sign-on (issuer discovery, token, userinfo and
// JWKS). A URL is checked when it is saved (Validate: form, host name rules,
// every address its name resolves to) and again inside the dialer on the
// addresses actually dialled, after resolution, so a name that resolves to a
// public address when saved and to a private one later never gets a request.
//
// # Blocked destinations
//
// IPv4: the IANA special-purpose ranges of code.dny.dev/ssrf (a superset of
// the list of docs/decisions.md#blocked-destinations: 0/8, 10/8, 100.64/10,
// 127/8, 169.254/16, 172.16/12, 192.0.0/24, 192.0.2/24, 192.168/16, 198.18/15,
// 198.51.100/24, 203.0.113/24, 224/4, 240/4, plus the AS112, AMT and
// 6to4-relay /24s).
//
// IPv6: everything outside global unicast 2000::/3 (so ::, ::1, the
// IPv4-compatible ::/96, 100::/64, fc00::/7, fe80::/10, fec0::/10, ff00::/8),
// the special-purpose 2001::/23 (except Teredo, below), 2001:db8::/32,
// 3fff::/20, 2620:4f:8000::/48, and the local-use NAT64 prefix 64:ff9b:1::/48
// whole. Every form that embeds an IPv4 address is judged by the address it
// embeds (refused when that one is blocked): IPv4-mapped ::ffff:a.b.c.d,
// IPv4-translated ::ffff:0:a.b.c.d (RFC 2765), NAT64 64:ff9b::a.b.c.d
// (RFC 6052), 6to4 2002:AABB:CCDD::/48 (RFC 3056) and Teredo 2001:0:S:S::C:C
// (RFC 4380: the server address and the client address, stored inverted;
// either blocked refuses). Checked the same way at create and at dial time.
//
// Names: localhost, *.localhost, *.local and single-label names are refused,
// and so is an IPv4 address written in any form but canonical dotted decimal
// (one integer, hex, octal, zero-padded or fewer than four parts): resolvers
// disagree on what those mean. Only https is accepted.
//
// # Test and local-run exemptions
//
// OUTBOUND_ALLOW_CIDRS (alias WEBHOOK_ALLOW_CIDRS) lists prefixes exempt from
// the blocked ranges and OUTBOUND_CA_FILE (alias WEBHOOK_CA_FILE) a PEM bundle
// trusted beside the system roots. The deployed stack never sets either;
// HTTPS stays required.
package outbound

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

	"code.dny.dev/ssrf"
)

// Resolver resolves host names; *net.Resolver satisfies it. Tests inject one
// to change answers between validation and dialling (DNS rebinding).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides which destinations Gale may reach (see the package doc).
type Guard struct {
	// Allow lists prefixes exempt from the blocked ranges (OUTBOUND_ALLOW_CIDRS;
	// tests and local runs only: the deployed stack never sets it).
	Allow []netip.Prefix
	// Resolver resolves names; nil means net.DefaultResolver.
	Resolver Resolver
}

// NewGuard parses the allowed CIDRs (OUTBOUND_ALLOW_CIDRS).
func NewGuard(allow []string) (*Guard, error) {
	g := &Guard{}
	for _, c := range allow {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, fmt.Errorf("outbound: OUTBOUND_ALLOW_CIDRS entry %q: %w", c, err)
		}
		g.Allow = append(g.Allow, p.Masked())
	}
	return g, nil
}

// URLError says why a URL is refused; Reason is shown in the error details.
type URLError struct{ Reason string }

func (e *URLError) Error() string { return "invalid URL: " + e.Reason }

// UnsafeError is a request refused by the dialer: the destination resolved to
// a blocked address (or failed the URL rules). No request was sent.
type UnsafeError struct{ Addr string }

func (e *UnsafeError) Error() string { return "unsafe outbound destination " + e.Addr }

func refuse(format string, args ...any) error { return &URLError{Reason: fmt.Sprintf(format, args...)} }

// MaxURL is the longest URL accepted.
const MaxURL = 2048

var blocked4 = ssrf.IPv4DeniedPrefixes

var (
	global6 = netip.MustParsePrefix("2000::/3")
	// blocked6 are the special-purpose prefixes inside global unicast; Teredo
	// (2001::/32, inside 2001::/23) is judged by its embedded addresses first.
	blocked6    = prefixes("2001::/23", "2001:db8::/32", "3fff::/20", "2620:4f:8000::/48")
	nat64Local  = netip.MustParsePrefix("64:ff9b:1::/48")
	nat64       = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4      = netip.MustParsePrefix("2002::/16")
	teredo      = netip.MustParsePrefix("2001::/32")
	mapped4     = netip.MustParsePrefix("::ffff:0:0/96")
	translated4 = netip.MustParsePrefix("::ffff:0:0:0/96")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Blocked reports whether a may not be a destination (exemptions applied).
func (g *Guard) Blocked(a netip.Addr) bool {
	a = a.WithZone("")
	for _, p := range g.Allow {
		if p.Contains(a) || (a.Is4In6() && p.Contains(a.Unmap())) {
			return false
		}
	}
	return BlockedAddr(a)
}

// Embedded returns the IPv4 addresses an IPv6 address carries in one of the
// forms of the package doc (none for another address).
func Embedded(a netip.Addr) []netip.Addr {
	a = a.WithZone("")
	if !a.Is6() {
		return nil
	}
	b := a.As16()
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]}) }
	switch {
	case mapped4.Contains(a), translated4.Contains(a), nat64.Contains(a):
		return []netip.Addr{v4(12)}
	case sixTo4.Contains(a):
		return []netip.Addr{v4(2)}
	case teredo.Contains(a):
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []netip.Addr{v4(4), client}
	}
	return nil
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
	if e := Embedded(a); e != nil {
		for _, v4 := range e {
			if in(blocked4, v4) {
				return true
			}
		}
		return false
	}
	if nat64Local.Contains(a) || !global6.Contains(a) {
		return true
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

// CheckNow is the check before each request (a webhook delivery attempt): the
// form rules, then the host's current addresses. A blocked answer (or a URL the rules refuse) is an
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
		return nil, fmt.Errorf("outbound: port %q: %w", portStr, err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = g.resolver().LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("outbound: %s has no address", host)
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

// Check applies the rules that need no network (form, host name, literal
// address) to raw: for URLs Gale did not choose but will call, such as the
// endpoints an identity provider's discovery document names.
func (g *Guard) Check(raw string) error {
	_, err := g.parse(raw)
	return err
}
