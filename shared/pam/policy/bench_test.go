package policy

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// benchChain is 200 enabled rules and 20 software policies (100 entries), a
// mix of every criterion built so that none decides the benchmark's request:
// every rule is evaluated, many past their cheap criteria (globs sharing the
// path's prefix and suffix run their NFA, signer rules reach a closed time
// window in a named zone).
func benchChain() ChainInput {
	in := ChainInput{DefaultVerdict: VerdictRequireApproval}
	for i := 0; i < 200; i++ {
		r := Rule{ID: fmt.Sprintf("rule-%03d", i), OrgID: orgA, Name: fmt.Sprintf("rule %d", i), Verdict: VerdictAutoApprove,
			Priority: i % 17, Enabled: true, CreatedAt: t0.Add(time.Duration(i) * time.Second), CreatedBy: bob, UpdatedBy: bob}
		switch i % 5 {
		case 0:
			r.MatchPathGlob = fmt.Sprintf(`C:\Program Files\*\App%d\**\*.exe`, i)
		case 1:
			r.MatchCommandLine = fmt.Sprintf("/flag%d", i)
			r.MatchUser = `CORP\alice`
		case 2:
			r.MatchSigner = "Vendor Inc."
			r.TimeWindow = win("22:00", "06:00", []int{1, 2, 3}, "Europe/Berlin")
		case 3:
			r.MatchHash = fmt.Sprintf("%064x", i)
			r.MatchAdGroup = "Engineering"
			r.MatchNegate = []Criterion{CriterionAdGroup}
		case 4:
			r.MatchParentImage = fmt.Sprintf(`C:\Windows\**\svc%d.exe`, i)
			r.MatchSignerGroupID = ptr(grpID)
		}
		in.Rules = append(in.Rules, r)
	}
	in.SignerGroups = testGroups
	for i := 0; i < 20; i++ {
		p := SoftwarePolicy{ID: fmt.Sprintf("pol-%02d", i), OrgID: orgA, Name: "p", Mode: ModeBlocklist, Priority: i, Enabled: true}
		for j := 0; j < 5; j++ {
			n := i*5 + j
			p.Executables = append(p.Executables,
				Executable{Hash: fmt.Sprintf("%064x", n+1000)},
				Executable{Signer: fmt.Sprintf("Signer %d", n)},
				Executable{PathGlob: fmt.Sprintf(`C:\Program Files\*\Tool%d.exe`, n)})
		}
		in.Policies = append(in.Policies, p)
	}
	return in
}

// BenchmarkDecide200Rules is the rule engine's cost per request with 200
// enabled rules (goal: at most 50 µs).
func BenchmarkDecide200Rules(b *testing.B) {
	c := Compile(benchChain())
	obs := uacObs()
	now := thu(12, 0, 0)
	if d := c.Decide(obs, now); d.Source != SourceDefault {
		b.Fatalf("benchmark request decided by %s %s%s: every rule must run", d.Source, d.RuleID, d.PolicyID)
	}
	perOp(b, "request", func() { c.Decide(obs, now) })
}

// perOp runs f b.N times and reports its wall time per op in µs and, where
// the OS tells a thread's CPU time, the same in CPU µs: a figure other
// processes on a shared machine do not inflate.
func perOp(b *testing.B, op string, f func()) {
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0, cpuOK := threadCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/"+op)
	if cpu1, ok := threadCPU(); ok && cpuOK {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/"+op)
	}
}

// BenchmarkCompile200Rules is the cost of compiling the same chain, paid
// once per load of an organization's rules.
func BenchmarkCompile200Rules(b *testing.B) {
	in := benchChain()
	perOp(b, "compile", func() { Compile(in) })
}

// BenchmarkPreview5000 is a preview's pure part over the scan limit.
func BenchmarkPreview5000(b *testing.B) {
	h := history(PreviewMaxScanned)
	r := Rule{MatchPathGlob: `C:\Program Files\**\setup.exe`, MatchCommandLine: "/install"}
	perOp(b, "preview", func() {
		if _, err := Preview(r, nil, h, PreviewOptions{}); err != nil {
			b.Fatal(err)
		}
	})
}
