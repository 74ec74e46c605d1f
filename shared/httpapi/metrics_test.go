package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

func TestEmbeddedMetrics(t *testing.T) {
	defer func(f string) { metricsFunction = f }(metricsFunction)
	var buf bytes.Buffer
	log := NewLogger(&buf, slog.LevelInfo)
	line := func() map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, buf.Bytes())
		}
		buf.Reset()
		return m
	}

	// Local runs and tests: no metrics.
	metricsFunction = ""
	log.InfoContext(context.Background(), "request", "status", 503, "durationMs", 12, "dbCalls", 3)
	if m := line(); m["_aws"] != nil || m["requests"] != nil {
		t.Fatalf("metrics without GALE_FUNCTION: %v", m)
	}

	metricsFunction = "users"
	log.InfoContext(context.Background(), "request", "status", 503, "durationMs", 12, "dbCalls", 3, "dbRCU", 1.5, "dbWCU", 2.0)
	m := line()
	if m["function"] != "users" || m["requests"] != 1.0 || m["status5xx"] != 1.0 || m["status4xx"] != 0.0 || m["dbCalls"] != 3.0 ||
		m["dbRCU"] != 1.5 || m["dbWCU"] != 2.0 {
		t.Fatalf("request line %v", m)
	}
	aws, _ := m["_aws"].(map[string]any)
	d := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
	if d["Namespace"] != MetricsNamespace || aws["Timestamp"] == nil {
		t.Fatalf("directive %v", aws)
	}
	// Every metric named in the directive is a number on the line (EMF's rule).
	for _, x := range d["Metrics"].([]any) {
		name := x.(map[string]any)["Name"].(string)
		if _, ok := m[name].(float64); !ok {
			t.Errorf("metric %s is not a field of the line", name)
		}
	}

	log.InfoContext(context.Background(), "delivery", "outcome", "failed")
	m = line()
	d = m["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)
	if m["deliveries"] != 1.0 || d["Dimensions"].([]any)[0].([]any)[1] != "outcome" {
		t.Fatalf("delivery line %v", m)
	}
	log.InfoContext(context.Background(), "batch", "messages", 10, "batchItemFailures", 2)
	if m = line(); m["batchItemFailures"] != 2.0 || m["_aws"] == nil {
		t.Fatalf("batch line %v", m)
	}
	log.InfoContext(context.Background(), "something else")
	if m = line(); m["_aws"] != nil {
		t.Fatalf("plain line got metrics: %v", m)
	}
}
