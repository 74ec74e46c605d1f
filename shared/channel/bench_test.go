package channel_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/gale-rmm/gale/tests/fixture"
)

// BenchmarkDecisionToAgent measures, over 200 decisions per iteration, the
// time from a human's approve request to the agent's receipt of the
// elevation.decision frame on its channel (a real WebSocket client on the
// loopback bridge; DynamoDB is moto_server). It reports p50_ms and p99_ms.
func BenchmarkDecisionToAgent(b *testing.B) {
	const decisions = 200
	n := newNet(b)
	d := n.device(b, "bench")
	c, _ := n.connect(b, d)
	arrived := make(chan map[string]any, decisions)
	go func() {
		for {
			_, data, err := c.Read(context.Background())
			if err != nil {
				close(arrived)
				return
			}
			var f map[string]any
			if json.Unmarshal(data, &f) == nil && f["type"] == "elevation.decision" {
				f["at"] = time.Now()
				arrived <- f
			}
		}
	}()
	var lat []time.Duration
	for b.Loop() {
		b.StopTimer()
		ids := make([]string, decisions)
		for i := range ids {
			ids[i] = n.pending(b, d)
		}
		// The ingest limit (600 a minute per device) is the agent's, not
		// what is measured: each round starts a fresh window.
		n.Env.Clock.Advance(2 * time.Minute)
		b.StartTimer()
		for _, id := range ids {
			start := time.Now()
			fixture.Expect(b, n.Call(b, http.MethodPost, "/api/v1/pam/elevation-requests/"+id+"/respond", fixture.AAdmin,
				map[string]any{"decision": "approve", "durationMinutes": 30}), http.StatusOK)
			f, ok := <-arrived
			if !ok || f["requestId"] != id {
				b.Fatalf("frame %v for %s", f, id)
			}
			lat = append(lat, f["at"].(time.Time).Sub(start))
		}
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50_ms")
	b.ReportMetric(q(0.99), "p99_ms")
	if q(0.99) >= 1000 {
		b.Errorf("p99 decision to agent %.1f ms, want under 1 s", q(0.99))
	}
}
