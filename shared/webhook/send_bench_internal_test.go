package webhook

import (
	"context"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/outbound"
)

// BenchmarkSignedSend is the worker's own ceiling without the emulator: each
// operation is one attempt's sending part (DNS-free URL check, signature,
// guarded dial with keep-alive, HTTPS POST, response read) to a local TLS
// receiver, run from as many goroutines as a worker batch has records.
func BenchmarkSignedSend(b *testing.B) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	ca := filepath.Join(b.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		b.Fatal(err)
	}
	g, err := outbound.NewGuard([]string{"127.0.0.1/32"})
	if err != nil {
		b.Fatal(err)
	}
	client, err := NewHTTPClient(g, ca)
	if err != nil {
		b.Fatal(err)
	}
	w := &Worker{Guard: g, HTTP: client, Clock: clock.System{}, Log: slog.New(slog.DiscardHandler)}
	h := &hook{url: srv.URL + "/in", secret: []byte("bench-secret"), policy: DefaultRetry}
	d := &Delivery{ID: DeliveryID("e", "w", time.Now()), EventID: "e", Event: "device.offline",
		Body: `{"id":"e","type":"device.offline","timestamp":"2026-11-01T09:00:00.000Z","orgId":"o","data":{"deviceId":"d-1","hostname":"WS-0042"}}`}
	b.SetParallelism(5) // 10 goroutines on 2 cores: one SQS batch's records
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			var r result
			w.send(context.Background(), h, d, time.Now(), &r)
			if r.to != DeliveryDelivered {
				b.Errorf("attempt: %+v", r)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
}
