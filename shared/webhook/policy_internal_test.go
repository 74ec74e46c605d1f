package webhook

import (
	"github.com/gale-rmm/gale/shared/routes"

	"strings"
	"testing"
	"time"
)

func TestDefaultScheduleIsOneTwoFourEightSixteen(t *testing.T) {
	want := []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
	for n, w := range want {
		if got := DefaultRetry.Delay(n); got != w {
			t.Errorf("Delay(%d) = %v, want %v", n, got, w)
		}
	}
	if got := DefaultRetry.Delay(20); got != 300*time.Second {
		t.Errorf("Delay(20) = %v, want the 300 s cap", got)
	}
	p := RetryPolicy{MaxRetries: 3, InitialDelayMs: 150, BackoffMultiplier: 1.5, MaxDelayMs: 1000}
	for n, w := range []time.Duration{150 * time.Millisecond, 225 * time.Millisecond, 337500 * time.Microsecond, 506250 * time.Microsecond, 759375 * time.Microsecond, time.Second} {
		if got := p.Delay(n); got != w {
			t.Errorf("custom Delay(%d) = %v, want %v", n, got, w)
		}
	}
}

func TestDelaySecondsRoundUpAndCap(t *testing.T) {
	for d, want := range map[time.Duration]int32{0: 0, time.Millisecond: 1, 150 * time.Millisecond: 1, time.Second: 1,
		1001 * time.Millisecond: 2, 16 * time.Second: 16, 900 * time.Second: 900, 901 * time.Second: 900, time.Hour: 900} {
		if got := delaySeconds(d); got != want {
			t.Errorf("delaySeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestDeliveryIDIsDeterministicAndTimeOrdered(t *testing.T) {
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	a := DeliveryID("ev-1", "wh-1", at)
	if a != DeliveryID("ev-1", "wh-1", at) {
		t.Fatal("same event and webhook give different ids")
	}
	if a == DeliveryID("ev-1", "wh-2", at) || a == DeliveryID("ev-2", "wh-1", at) {
		t.Fatal("different inputs give the same id")
	}
	if a[14] != '7' {
		t.Errorf("id %s is not version 7", a)
	}
	if b := DeliveryID("ev-0", "wh-1", at.Add(time.Millisecond)); b <= a {
		t.Errorf("later id %s does not sort after %s", b, a)
	}
}

func TestTruncateKeepsCharacters(t *testing.T) {
	s := strings.Repeat("é", 1500)
	if got := truncate(s, MaxResponseBody); len([]rune(got)) != MaxResponseBody {
		t.Errorf("truncate kept %d characters", len([]rune(got)))
	}
	if got := truncate("short", MaxResponseBody); got != "short" {
		t.Errorf("truncate(short) = %q", got)
	}
}

func TestMaskURLStripsCredentialsQueryAndFragment(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@hooks.example.com:8443/p/a?token=abc#frag": "https://hooks.example.com:8443/p/a",
		"https://hooks.example.com/?":                               "https://hooks.example.com/",
		"https://hooks.example.com/path":                            "https://hooks.example.com/path",
	} {
		if got := maskURL(in); got != want {
			t.Errorf("maskURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A claim must outlast an attempt and lapse before the queue shows the message
// again, or a dead worker's attempt would wait for nothing or run twice at once.
func TestClaimFitsBetweenTimeoutAndVisibility(t *testing.T) {
	for _, q := range routes.Queues {
		if q.Name != "webhook-deliveries" {
			continue
		}
		if vis := time.Duration(q.VisibilityTimeoutSeconds) * time.Second; claimFor <= Timeout || claimFor >= vis {
			t.Errorf("claim %v, attempt timeout %v, visibility %v", claimFor, Timeout, vis)
		}
		return
	}
	t.Fatal("no webhook-deliveries queue")
}
