package policy

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func history(n int) []HistoryItem {
	h := make([]HistoryItem, n)
	for i := range h {
		o := uacObs()
		status := StatusPending
		if i%3 == 0 {
			o.TargetExecutableSigner = "Other Corp"
			status = StatusDenied
		}
		if i%5 == 0 {
			status = StatusAutoApproved
		}
		h[i] = HistoryItem{ID: fmt.Sprintf("req-%05d", i), RequestedAt: thu(12, 0, 0).Add(-time.Duration(i) * time.Minute),
			FlowType: FlowUACIntercept, Status: status, Observation: o}
	}
	return h
}

func TestPreview(t *testing.T) {
	h := history(30)
	res, err := Preview(Rule{MatchSigner: "vendor inc."}, nil, h, PreviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	breakdown := map[string]int{}
	for _, it := range h {
		if it.Observation.TargetExecutableSigner == "Vendor Inc." {
			want++
			breakdown[it.Status]++
		}
	}
	if res.TotalScanned != 30 || res.TotalMatched != want || res.Truncated {
		t.Errorf("result %+v, want %d matched of 30", res, want)
	}
	if fmt.Sprint(res.StatusBreakdown) != fmt.Sprint(breakdown) {
		t.Errorf("breakdown %v, want %v", res.StatusBreakdown, breakdown)
	}
	if len(res.Sample) != PreviewMaxSamples || res.Sample[0].ID != "req-00001" {
		t.Errorf("sample %+v", res.Sample)
	}
}

func TestPreviewLimits(t *testing.T) {
	h := history(PreviewMaxScanned + 1)
	res, err := Preview(Rule{MatchSigner: "Vendor Inc."}, nil, h, PreviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalScanned != PreviewMaxScanned || !res.Truncated || len(res.Sample) != PreviewMaxSamples {
		t.Errorf("scanned %d truncated %v samples %d", res.TotalScanned, res.Truncated, len(res.Sample))
	}
	res, _ = Preview(Rule{MatchSigner: "Vendor Inc."}, nil, h[:PreviewMaxScanned], PreviewOptions{})
	if res.TotalScanned != PreviewMaxScanned || res.Truncated {
		t.Errorf("exactly the limit: scanned %d truncated %v", res.TotalScanned, res.Truncated)
	}
	res, _ = Preview(Rule{MatchSigner: "Vendor Inc."}, nil, h, PreviewOptions{MaxScanned: 7, MaxSamples: 2})
	if res.TotalScanned != 7 || !res.Truncated || len(res.Sample) != 2 {
		t.Errorf("custom limits: %+v", res)
	}
}

func TestPreviewFlowTypeTimeWindowAndGroups(t *testing.T) {
	h := history(10)
	h[2].FlowType, h[2].Observation = FlowAIToolAction, toolObs()
	res, _ := Preview(Rule{MatchUser: "alice"}, nil, h, PreviewOptions{FlowType: FlowAIToolAction})
	if res.TotalScanned != 1 || res.TotalMatched != 1 || res.Sample[0].ID != "req-00002" {
		t.Errorf("flow filter: %+v", res)
	}
	// Each item is judged at its requestedAt: 11:55-12:00 only.
	res, _ = Preview(Rule{MatchSigner: "Vendor Inc.", TimeWindow: win("11:55", "12:00", nil, "")}, nil, h, PreviewOptions{FlowType: FlowUACIntercept})
	if res.TotalMatched != 3 { // req 1, 4 and 5: 0 and 3 are Other Corp, 2 is an AI request
		t.Errorf("time window: %+v", res)
	}
	// History holds no directory groups: a draft on them matches nothing,
	// even when an item carries some.
	if res, _ = Preview(Rule{MatchAdGroup: "Engineering"}, nil, h, PreviewOptions{}); res.TotalMatched != 0 {
		t.Errorf("ad group: %+v", res)
	}
	if res, _ = Preview(Rule{MatchAdGroup: "Engineering", MatchNegate: neg(CriterionAdGroup)}, nil, h, PreviewOptions{}); res.TotalMatched != 0 {
		t.Errorf("ad group: %+v", res)
	}
	if _, err := Preview(Rule{MatchSignerGroupID: ptr(grpID)}, nil, h, PreviewOptions{}); !errors.Is(err, ErrSignerGroupMissing) {
		t.Errorf("missing group: %v", err)
	}
	if res, err := Preview(Rule{MatchSignerGroupID: ptr(grpID)}, testGroups, h, PreviewOptions{}); err != nil || res.TotalMatched == 0 {
		t.Errorf("group: %+v %v", res, err)
	}
	if res, _ = Preview(Rule{}, nil, h, PreviewOptions{}); res.TotalMatched != 0 || res.Sample == nil || res.StatusBreakdown == nil {
		t.Errorf("empty rule: %+v", res)
	}
}
