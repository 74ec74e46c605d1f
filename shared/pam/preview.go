package pam

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/pam/policy"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// Preview limits.
const (
	DefaultWindowDays = 30
	MaxWindowDays     = 90
)

// PreviewInput is the POST /pam/rules/preview body: a draft rule's criteria
// (the rule body, RuleInput), the window and an optional flow type. name,
// verdict, priority and enabled may be sent (a rule form posts them) and do
// not matter.
type PreviewInput struct {
	RuleInput
	WindowDays *int    `json:"windowDays"`
	FlowType   *string `json:"flowType"`
}

// PreviewResult is the preview answer.
type PreviewResult struct {
	Success         bool            `json:"success"`
	TotalMatched    int             `json:"totalMatched"`
	TotalScanned    int             `json:"totalScanned"`
	WindowDays      int             `json:"windowDays"`
	Truncated       bool            `json:"truncated"`
	StatusBreakdown map[string]int  `json:"statusBreakdown"`
	Sample          []PreviewSample `json:"sample"`
}

// PreviewSample is one matched request.
type PreviewSample struct {
	ID          string `json:"id"`
	RequestedAt string `json:"requestedAt"`
	FlowType    string `json:"flowType"`
	Status      string `json:"status"`
}

// Preview matches a draft rule alone against the organization's requests of
// the last windowDays (at most PreviewMaxScan of them, newest first, within
// the caller's sites): no priority shadowing, no software-policy bridge.
func (s *Service) Preview(ctx context.Context, in PreviewInput) (*PreviewResult, error) {
	p, err := actor(ctx, authz.DevicesWrite)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	days := DefaultWindowDays
	if in.WindowDays != nil {
		days = *in.WindowDays
		valid.Range(f, "windowDays", days, 1, MaxWindowDays)
	}
	flow := ""
	if in.FlowType != nil {
		flow = *in.FlowType
		valid.OneOf(f, "flowType", flow, FlowTypes...)
	}
	r := &Rule{Name: "preview", Verdict: VerdictRequireApproval, Priority: DefaultPriority, Enabled: true}
	in.apply(f, r)
	o, err := s.createOrg(ctx, p, f, in.OrgID, func(f fault.Fields) {
		f.Merge("", policy.ValidateCriteria(toPolicyRule(r)))
	})
	if err != nil {
		return nil, err
	}
	r.OrgID = o.ID
	if r.SiteID != nil && !p.CanAccessSite(*r.SiteID) {
		return nil, ErrSiteAccess
	}
	// The draft names at most one signer group: read that one (GetItem), not
	// every group of the organization.
	var groups []SignerGroup
	if r.MatchSignerGroupID != nil {
		g, err := s.St.SignerGroup(ctx, o.ID, *r.MatchSignerGroupID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, ErrSignerGroupRef
		case err != nil:
			return nil, err
		}
		groups = append(groups, *g)
	}
	now := s.Clock.Now()
	// One beyond the limit tells the engine whether the window holds more.
	reqs, _, err := s.St.Recent(ctx, o.ID, now.Add(-time.Duration(days)*24*time.Hour), PreviewMaxScan+1)
	if err != nil {
		return nil, err
	}
	history := make([]policy.HistoryItem, 0, len(reqs))
	for i := range reqs {
		q := &reqs[i]
		if !visible(p, q) {
			continue
		}
		history = append(history, historyItem(q))
	}
	res, err := policy.Preview(toPolicyRule(r), toPolicyGroups(groups), history,
		policy.PreviewOptions{FlowType: policy.FlowType(flow), MaxScanned: PreviewMaxScan, MaxSamples: PreviewMaxSamples})
	if err != nil {
		return nil, err
	}
	out := &PreviewResult{Success: true, TotalMatched: res.TotalMatched, TotalScanned: res.TotalScanned, WindowDays: days,
		Truncated: res.Truncated, StatusBreakdown: res.StatusBreakdown, Sample: []PreviewSample{}}
	for _, x := range res.Sample {
		out.Sample = append(out.Sample, PreviewSample{ID: x.ID, RequestedAt: clock.Format(x.RequestedAt), FlowType: string(x.FlowType), Status: x.Status})
	}
	return out, nil
}

// historyItem is a stored request as the engine replays it.
func historyItem(q *Request) policy.HistoryItem {
	at := parseTime(q.RequestedAt)
	obs := policy.Observation{OrgID: q.OrgID, SiteID: q.site(), DeviceID: q.DeviceID, FlowType: policy.FlowType(q.FlowType),
		SubjectUsername: q.SubjectUsername, TargetExecutablePath: q.TargetExecutablePath, TargetExecutableHash: q.TargetExecutableHash,
		TargetExecutableSigner: q.TargetExecutableSigner, ParentImage: q.ParentImage, CommandLine: q.CommandLine, ObservedAt: parseTime(q.ObservedAt)}
	if q.PID != nil {
		obs.PID = int(*q.PID)
	}
	if q.ToolName != nil {
		obs.ToolName = *q.ToolName
	}
	obs.RiskTier = q.RiskTier
	return policy.HistoryItem{ID: q.ID, RequestedAt: at, FlowType: policy.FlowType(q.FlowType), Status: q.Status, Observation: obs}
}

func (h *Handler) preview(w http.ResponseWriter, r *http.Request) error {
	var in PreviewInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	out, err := h.Svc.Preview(r.Context(), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}
