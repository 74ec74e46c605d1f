package filter

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// FuzzParseEval: no input makes parsing, compiling or evaluating panic, and
// whatever parses compiles.
func FuzzParseEval(f *testing.F) {
	f.Add(`{"operator":"AND","conditions":[{"field":"hostname","operator":"contains","value":"web"}]}`)
	f.Add(cond("lastSeenAt", "withinLast", map[string]any{"amount": 3, "unit": "months"}))
	f.Add(cond("metrics.cpuPercent", "between", map[string]any{"from": 1, "to": 2}))
	f.Add(cond("software.notInstalled", "in", []string{"a", "b"}))
	f.Add(cond("hostname", "matches", "^(a|b)+$"))
	f.Add(`{"operator":"OR","conditions":[{"operator":"AND","conditions":[{"field":"tags","operator":"isEmpty"}]}]}`)
	f.Add(`{"operator":"AND","conditions":[null,1,"x",[],{}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) {
			return
		}
		g, err := Parse(json.RawMessage(body), "conditions")
		if err != nil {
			return
		}
		m, err := g.Compile(now)
		if err != nil {
			t.Fatalf("parsed but does not compile: %v", err)
		}
		for _, d := range []*Device{web, bare, {}} {
			m(d)
		}
	})
}

// fleet makes n varied devices.
func fleet(n int) []Device {
	out := make([]Device, n)
	oses := []string{"windows", "linux", "macos"}
	for i := range out {
		seen := now.Add(-time.Duration(i%5000) * time.Minute)
		out[i] = Device{
			ID: fmt.Sprint(i), OrgID: "org", Hostname: fmt.Sprintf("HOST-%05d.corp.example.com", i),
			OSType: oses[i%3], Status: []string{"online", "offline"}[i%2], LastSeenAt: &seen,
			CPUPercent: ptr(float64(i % 100)), DiskPercent: ptr(float64(i * 7 % 100)),
			Tags: []string{"site" + fmt.Sprint(i%10), "prod"},
		}
	}
	return out
}

// BenchmarkMatch evaluates a 6-condition nested filter over 100,000 devices.
func BenchmarkMatch(b *testing.B) {
	devices := fleet(100_000)
	m := compile(b, `{"operator":"AND","conditions":[
		{"field":"osType","operator":"in","value":["windows","linux"]},
		{"field":"hostname","operator":"contains","value":"corp"},
		{"operator":"OR","conditions":[
			{"field":"metrics.cpuPercent","operator":"greaterThan","value":80},
			{"field":"metrics.diskPercent","operator":"between","value":{"from":90,"to":100}},
			{"field":"tags","operator":"hasAny","value":["site3"]}]},
		{"field":"lastSeenAt","operator":"withinLast","value":{"amount":2,"unit":"days"}}]}`)
	b.ResetTimer()
	matched := 0
	for i := 0; i < b.N; i++ {
		for j := range devices {
			if m(&devices[j]) {
				matched++
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(devices)), "ns/device")
	if matched == 0 {
		b.Fatal("nothing matched")
	}
}
