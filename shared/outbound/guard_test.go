package outbound_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"code.dny.dev/ssrf"

	"github.com/gale-rmm/gale/shared/outbound"
)

// resolver answers from a table, like DNS would.
type resolver map[string][]string

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	as, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range as {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// Every blocked range, by a first, an inner and a last address, and the
// embedded forms.
var blockedAddrs = []string{
	"0.0.0.0", "0.255.255.255", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.255", "127.0.0.1", "127.255.255.254",
	"169.254.169.254", "169.254.0.1", "172.16.0.1", "172.31.255.255", "192.0.0.1", "192.0.0.255", "192.0.2.1", "192.0.2.255",
	"192.168.0.1", "192.168.255.255", "198.18.0.1", "198.19.255.255", "198.51.100.1", "198.51.100.255", "203.0.113.1",
	"203.0.113.255", "224.0.0.1", "239.255.255.255", "240.0.0.1", "255.255.255.255",
	"::", "::1", "::127.0.0.1", "fc00::1", "fdff:ffff::1", "fe80::1", "febf::1", "fec0::1", "ff02::1", "ff00::", "2001:db8::1", "100::1",
	"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:a9fe:a9fe",
	"64:ff9b::127.0.0.1", "64:ff9b::a00:1", "64:ff9b::169.254.169.254", "64:ff9b:1::1",
	"2002:7f00:1::", "2002:a9fe:a9fe::1", "2002:c0a8:101::1",
}

var publicAddrs = []string{
	"8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.1", "172.15.255.255", "172.32.0.1", "192.0.1.1",
	"192.169.0.1", "198.17.255.255", "198.20.0.1", "223.255.255.255", "2606:4700:4700::1111", "2001:4860:4860::8888",
	"::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1",
}

func TestBlockedRanges(t *testing.T) {
	for _, a := range blockedAddrs {
		if !outbound.BlockedAddr(netip.MustParseAddr(a)) {
			t.Errorf("%s is not blocked", a)
		}
	}
	for _, a := range publicAddrs {
		if outbound.BlockedAddr(netip.MustParseAddr(a)) {
			t.Errorf("%s is blocked", a)
		}
	}
}

func TestValidateRefusesBlockedLiteralsNamesAndNotations(t *testing.T) {
	g := &outbound.Guard{Resolver: resolver{"hooks.example.com": {"93.184.216.34"}, "internal.example.com": {"10.1.2.3"},
		"mixed.example.com": {"93.184.216.34", "169.254.169.254"}, "v6.example.com": {"::ffff:127.0.0.1"},
		"rebind.example.com": {"64:ff9b::a9fe:a9fe"}}}
	ctx := context.Background()
	refused := []string{
		"http://hooks.example.com/x", "ftp://hooks.example.com/", "hooks.example.com/x", "https:///x", "https://", "",
		"https://localhost/", "https://LOCALHOST./", "https://a.localhost/", "https://printer.local/", "https://intranet/",
		"https://internal.example.com/", "https://mixed.example.com/", "https://v6.example.com/", "https://rebind.example.com/",
		"https://unknown.example.com/", "https://hooks.example.com:0/", "https://hooks.example.com:99999/",
		"https://hooks.example.com/a b", "https://hooks.example.com/\n", "https://bücher.example.com/",
		// Numeric notations of 127.0.0.1 and 10.0.0.1, and of a public address.
		"https://2130706433/", "https://0x7f000001/", "https://0x7f.0.0.1/", "https://0177.0.0.1/", "https://017700000001/",
		"https://127.1/", "https://127.0.1/", "https://012.0.0.1/", "https://167772161/", "https://0x0a000001/",
		"https://010.0.0.1/", "https://10.0.0.01/", "https://134744072/", "https://8.8.8.010/", "https://1.2.3.4.5/",
		"https://example.0x10/", "https://256.1.1.1/",
	}
	for _, a := range blockedAddrs {
		if strings.Contains(a, ":") {
			refused = append(refused, "https://["+a+"]/")
		} else {
			refused = append(refused, "https://"+a+"/")
		}
	}
	for _, u := range refused {
		err := g.Validate(ctx, u)
		var ue *outbound.URLError
		if !errors.As(err, &ue) || ue.Reason == "" {
			t.Errorf("Validate(%q) = %v, want a URLError with a reason", u, err)
		}
	}
	for _, u := range []string{"https://hooks.example.com/x", "https://hooks.example.com:8443/x?token=1#f",
		"https://user:pw@hooks.example.com/", "https://8.8.8.8/", "https://[2606:4700:4700::1111]/", "https://HOOKS.example.com./"} {
		if err := g.Validate(ctx, u); err != nil {
			t.Errorf("Validate(%q) = %v, want nil", u, err)
		}
	}
}

func TestAllowListExemptsOnlyItsPrefixes(t *testing.T) {
	g, err := outbound.NewGuard([]string{"127.0.0.1/32"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Blocked(netip.MustParseAddr("127.0.0.1")) || g.Blocked(netip.MustParseAddr("::ffff:127.0.0.1")) {
		t.Error("allowed 127.0.0.1 is blocked")
	}
	if !g.Blocked(netip.MustParseAddr("127.0.0.2")) || !g.Blocked(netip.MustParseAddr("10.0.0.1")) {
		t.Error("the allow list exempts more than its prefix")
	}
	if err := g.Validate(context.Background(), "https://127.0.0.1:8443/"); err != nil {
		t.Errorf("allowed literal refused: %v", err)
	}
	if err := g.Validate(context.Background(), "http://127.0.0.1:8443/"); err == nil {
		t.Error("http accepted for an allowed address: HTTPS stays required")
	}
	if _, err := outbound.NewGuard([]string{"not a cidr"}); err == nil {
		t.Error("a malformed CIDR is accepted")
	}
}

// The dialer resolves once and refuses before connecting when any answer is
// blocked, whatever validation saw.
func TestDialerRefusesBlockedAnswers(t *testing.T) {
	for _, host := range []string{"internal.example.com", "mixed.example.com", "v6.example.com", "127.0.0.1", "169.254.169.254"} {
		g := &outbound.Guard{Resolver: resolver{"internal.example.com": {"10.1.2.3"},
			"mixed.example.com": {"93.184.216.34", "169.254.169.254"}, "v6.example.com": {"::ffff:127.0.0.1"}}}
		_, err := g.DialContext(context.Background(), "tcp", net.JoinHostPort(host, "443"))
		var unsafe *outbound.UnsafeError
		if !errors.As(err, &unsafe) {
			t.Errorf("dial %s: %v, want UnsafeError", host, err)
		}
	}
}

// The IPv6 forms that embed an IPv4 address, each built around v4.
var embeddings = map[string]func(v4 [4]byte) string{
	"mapped ::ffff:a.b.c.d": func(b [4]byte) string { return fmt.Sprintf("::ffff:%d.%d.%d.%d", b[0], b[1], b[2], b[3]) },
	"mapped hex":            func(b [4]byte) string { return fmt.Sprintf("::ffff:%02x%02x:%02x%02x", b[0], b[1], b[2], b[3]) },
	"translated ::ffff:0:a.b.c.d": func(b [4]byte) string {
		return fmt.Sprintf("::ffff:0:%d.%d.%d.%d", b[0], b[1], b[2], b[3])
	},
	"translated hex": func(b [4]byte) string { return fmt.Sprintf("0:0:0:0:ffff:0:%02x%02x:%02x%02x", b[0], b[1], b[2], b[3]) },
	"NAT64 64:ff9b::/96": func(b [4]byte) string {
		return fmt.Sprintf("64:ff9b::%d.%d.%d.%d", b[0], b[1], b[2], b[3])
	},
	"NAT64 local 64:ff9b:1::/48": func(b [4]byte) string {
		return fmt.Sprintf("64:ff9b:1:%02x%02x:%02x:%02x00::", b[0], b[1], b[2], b[3]) // RFC 6052 /48: u octet zero
	},
	"6to4 2002::/16": func(b [4]byte) string { return fmt.Sprintf("2002:%02x%02x:%02x%02x::1", b[0], b[1], b[2], b[3]) },
	"Teredo server": func(b [4]byte) string {
		// Client 8.8.8.8 stored inverted (f7f7:f7f7).
		return fmt.Sprintf("2001:0:%02x%02x:%02x%02x:0:0:f7f7:f7f7", b[0], b[1], b[2], b[3])
	},
	"Teredo client": func(b [4]byte) string {
		// Server 8.8.4.4; the client address is stored inverted.
		return fmt.Sprintf("2001:0:808:404:8000:ffff:%02x%02x:%02x%02x", ^b[0], ^b[1], ^b[2], ^b[3])
	},
}

var nonPublic4 = [][4]byte{{127, 0, 0, 1}, {10, 0, 0, 1}, {169, 254, 169, 254}, {192, 168, 1, 1}, {172, 16, 0, 1},
	{100, 64, 0, 1}, {0, 0, 0, 0}, {224, 0, 0, 1}, {255, 255, 255, 255}, {198, 18, 0, 1}}

// Issue 18 item 5: every IPv6 form that embeds a non-public IPv4 address is
// refused at create (Validate of a literal and of a name resolving to it) and
// at dial time; the same forms around a public address pass (except the
// local-use NAT64 prefix, refused whole).
func TestEmbeddedIPv4FormsAreJudgedByTheirIPv4(t *testing.T) {
	ctx := context.Background()
	for name, form := range embeddings {
		for _, v4 := range nonPublic4 {
			a := netip.MustParseAddr(form(v4))
			if !outbound.BlockedAddr(a) {
				t.Errorf("%s: %s (embeds %v) is not blocked", name, a, netip.AddrFrom4(v4))
			}
			g := &outbound.Guard{Resolver: resolver{"rebind.example.com": {a.String()}}}
			for _, u := range []string{"https://[" + a.String() + "]/", "https://rebind.example.com/"} {
				var ue *outbound.URLError
				if err := g.Validate(ctx, u); !errors.As(err, &ue) {
					t.Errorf("%s: Validate(%s) = %v, want a URLError", name, u, err)
				}
				var unsafe *outbound.UnsafeError
				if err := g.CheckNow(ctx, u); !errors.As(err, &unsafe) {
					t.Errorf("%s: CheckNow(%s) = %v, want an UnsafeError", name, u, err)
				}
			}
			for _, host := range []string{a.String(), "rebind.example.com"} {
				var unsafe *outbound.UnsafeError
				if _, err := g.DialContext(ctx, "tcp", net.JoinHostPort(host, "443")); !errors.As(err, &unsafe) {
					t.Errorf("%s: dial %s = %v, want an UnsafeError", name, host, err)
				}
			}
		}
		pub := netip.MustParseAddr(form([4]byte{93, 184, 216, 34}))
		if want := strings.HasPrefix(name, "NAT64 local"); outbound.BlockedAddr(pub) != want {
			t.Errorf("%s: %s (embeds a public address) blocked = %v, want %v", name, pub, !want, want)
		}
	}
}

func TestEmbeddedExtractsEachForm(t *testing.T) {
	for a, want := range map[string][]string{
		"::ffff:10.1.2.3":                      {"10.1.2.3"},
		"::ffff:0:10.1.2.3":                    {"10.1.2.3"},
		"64:ff9b::10.1.2.3":                    {"10.1.2.3"},
		"2002:a01:203::":                       {"10.1.2.3"},
		"2001:0:4136:e378:8000:63bf:3fff:fdd2": {"65.54.227.120", "192.0.2.45"}, // RFC 4380's example
		"2606:4700:4700::1111":                 nil,
		"8.8.8.8":                              nil,
	} {
		got := outbound.Embedded(netip.MustParseAddr(a))
		if len(got) != len(want) {
			t.Errorf("Embedded(%s) = %v, want %v", a, got, want)
			continue
		}
		for i := range got {
			if got[i].String() != want[i] {
				t.Errorf("Embedded(%s) = %v, want %v", a, got, want)
			}
		}
	}
}

// The ranges of docs/decisions.md#blocked-destinations are all inside what the
// guard blocks, and so is every prefix of code.dny.dev/ssrf's IPv4 and IPv6
// deny lists.
func TestBlocksDecisionsAndSSRFRanges(t *testing.T) {
	var ps []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4",
		"240.0.0.0/4", "::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8"} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	ps = append(ps, ssrf.IPv4DeniedPrefixes...)
	for _, p := range ssrf.IPv6DeniedPrefixes {
		if p.String() != "2001::/23" && p.String() != "2002::/16" { // Teredo and 6to4 are judged by what they embed
			ps = append(ps, p)
		}
	}
	for _, p := range ps {
		first := p.Addr()
		last := lastAddr(p)
		if !outbound.BlockedAddr(first) || !outbound.BlockedAddr(last) {
			t.Errorf("%s: first %s blocked %v, last %s blocked %v", p, first, outbound.BlockedAddr(first), last, outbound.BlockedAddr(last))
		}
	}
	// 2001::/23 outside Teredo is blocked whole.
	for _, a := range []string{"2001:1::1", "2001:2::1", "2001:1ff:ffff::1"} {
		if !outbound.BlockedAddr(netip.MustParseAddr(a)) {
			t.Errorf("%s is not blocked", a)
		}
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// The client refuses a plain-HTTP or local-name URL before any dial, even for
// an exempted address (so a discovery document cannot downgrade a call).
func TestClientRefusesURLsTheRulesRefuse(t *testing.T) {
	g, err := outbound.NewGuard([]string{"127.0.0.1/32"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := outbound.NewHTTPClient(g, "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://127.0.0.1:1/x", "https://localhost:1/", "https://0x7f000001/", "https://[::ffff:0:7f00:1]/"} {
		_, err := c.Get(u)
		var unsafe *outbound.UnsafeError
		if !errors.As(err, &unsafe) {
			t.Errorf("GET %s: %v, want an UnsafeError", u, err)
		}
	}
}
