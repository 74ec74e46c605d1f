package httpapi

import (
	"log/slog"
	"os"
)

// Gale's own CloudWatch metrics ride on log lines it writes anyway, in the
// Embedded Metric Format (EMF): CloudWatch Logs extracts them from the line,
// so a metric costs no API call and no extra line. Three lines carry metrics:
//
//	"request" (the edge's access log): requests, status4xx, status5xx,
//	          durationMs, dbCalls (DynamoDB calls of the request) and dbRCU,
//	          dbWCU (the capacity units they consumed), by function
//	"batch"   (an SQS worker's batch):  messages, batchItemFailures, by function
//	"delivery" (a webhook attempt):     deliveries, by function and outcome
//
// The CDK app's dashboard and alarms read them from namespace MetricsNamespace.
// Metrics are written only in a deployed function (GALE_FUNCTION is set by the
// CDK app), so local runs and tests log as before.

// MetricsNamespace is the CloudWatch namespace of the metrics above.
const MetricsNamespace = "Gale"

// metricsFunction names the deployed function; empty disables metrics.
var metricsFunction = os.Getenv("GALE_FUNCTION")

type emfMetric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit,omitempty"`
}

type emfDirective struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []emfMetric `json:"Metrics"`
}

type emfMeta struct {
	Timestamp         int64          `json:"Timestamp"`
	CloudWatchMetrics []emfDirective `json:"CloudWatchMetrics"`
}

// withMetrics adds the EMF metadata (and the derived metric fields) to a
// record that carries metrics; other records pass unchanged.
func withMetrics(r slog.Record) slog.Record {
	if metricsFunction == "" {
		return r
	}
	dims := [][]string{{"function"}}
	var metrics []emfMetric
	switch r.Message {
	case "request":
		var status int64
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "status" {
				status = a.Value.Int64()
			}
			return true
		})
		r.AddAttrs(slog.Int("requests", 1), slog.Int("status4xx", b2i(status >= 400 && status < 500)),
			slog.Int("status5xx", b2i(status >= 500)))
		metrics = []emfMetric{{"requests", "Count"}, {"status4xx", "Count"}, {"status5xx", "Count"},
			{"durationMs", "Milliseconds"}, {"dbCalls", "Count"},
			{"dbRCU", "Count"}, {"dbWCU", "Count"}}
	case "batch":
		metrics = []emfMetric{{"messages", "Count"}, {"batchItemFailures", "Count"}}
	case "delivery":
		r.AddAttrs(slog.Int("deliveries", 1))
		dims = [][]string{{"function", "outcome"}}
		metrics = []emfMetric{{"deliveries", "Count"}}
	default:
		return r
	}
	r.AddAttrs(slog.String("function", metricsFunction), slog.Any("_aws", emfMeta{
		Timestamp:         r.Time.UnixMilli(),
		CloudWatchMetrics: []emfDirective{{Namespace: MetricsNamespace, Dimensions: dims, Metrics: metrics}},
	}))
	return r
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
