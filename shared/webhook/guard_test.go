package webhook_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/webhook"
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
		if !webhook.BlockedAddr(netip.MustParseAddr(a)) {
			t.Errorf("%s is not blocked", a)
		}
	}
	for _, a := range publicAddrs {
		if webhook.BlockedAddr(netip.MustParseAddr(a)) {
			t.Errorf("%s is blocked", a)
		}
	}
}

func TestValidateRefusesBlockedLiteralsNamesAndNotations(t *testing.T) {
	g := &webhook.Guard{Resolver: resolver{"hooks.example.com": {"93.184.216.34"}, "internal.example.com": {"10.1.2.3"},
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
		var ue *webhook.URLError
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
	g, err := webhook.NewGuard([]string{"127.0.0.1/32"})
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
	if _, err := webhook.NewGuard([]string{"not a cidr"}); err == nil {
		t.Error("a malformed CIDR is accepted")
	}
}

// The dialer resolves once and refuses before connecting when any answer is
// blocked, whatever validation saw.
func TestDialerRefusesBlockedAnswers(t *testing.T) {
	for _, host := range []string{"internal.example.com", "mixed.example.com", "v6.example.com", "127.0.0.1", "169.254.169.254"} {
		g := &webhook.Guard{Resolver: resolver{"internal.example.com": {"10.1.2.3"},
			"mixed.example.com": {"93.184.216.34", "169.254.169.254"}, "v6.example.com": {"::ffff:127.0.0.1"}}}
		_, err := g.DialContext(context.Background(), "tcp", net.JoinHostPort(host, "443"))
		var unsafe *webhook.UnsafeError
		if !errors.As(err, &unsafe) {
			t.Errorf("dial %s: %v, want UnsafeError", host, err)
		}
	}
}
