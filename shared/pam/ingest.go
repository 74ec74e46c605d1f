package pam

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/pam/policy"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// Limits of the agent ingest body's strings.
const (
	MaxSubject     = 256
	MaxPath        = 2048
	MaxSignerField = 1024
	MaxCommandLine = 16384
)

// IngestInput is the body of POST /agents/:id/elevation-requests.
type IngestInput struct {
	SubjectUsername        *string `json:"subject_username"`
	TargetExecutablePath   *string `json:"target_executable_path"`
	TargetExecutableHash   *string `json:"target_executable_hash"`
	TargetExecutableSigner *string `json:"target_executable_signer"`
	PID                    *int64  `json:"pid"`
	ParentImage            *string `json:"parent_image"`
	CommandLine            *string `json:"command_line"`
	ObservedAt             *string `json:"observed_at"`
}

// Ingested is the ingest answer: 201 {id, status}, or 200 {id: null,
// status: ignored}.
type Ingested struct {
	ID     *string `json:"id"`
	Status string  `json:"status"`
}

// clean removes control and bidi-override characters (agent strings are
// stored sanitised, docs/decisions.md#agent-strings) and trims the ends.
func clean(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u200b' || r == '\ufeff' {
			return -1
		}
		return r
	}, s))
}

func ingestString(f fault.Fields, path string, v *string, required bool, max int) string {
	if v == nil {
		if required {
			f.Add(path, "is required")
		}
		return ""
	}
	s := clean(*v)
	if required && s == "" {
		f.Add(path, "must not be empty")
	}
	if len([]rune(s)) > max {
		f.Addf(path, "must be at most %d characters", max)
	}
	return s
}

// Ingest records an elevation prompt the agent of a observed and decides it
// (software-policy bridge, rules, default verdict), and counts it once
// against its device's ingest limit with c (nil: counted already): a full
// window is 429 before anything else, body (the decode's refusal of the
// request body, or nil) and every later refusal are counted on their own,
// and a prompt that gets to its write is counted in its transaction.
// Ingest makes two DynamoDB calls: one Query of the organization's PAM# rows
// (the compiled chain is cached per organization and rules version, see
// chainCache) and one transaction that stores the request (unless ignored),
// its audit record, its event and c's count. It answers the event's send,
// which the caller runs before its answer (an unsent event is sent by the
// outbox drain); the event queues the mobile approval fan-out of a pending
// request (shared/push).
func (s *Service) Ingest(ctx context.Context, a *device.Agent, in IngestInput, body error, c *ratelimit.Pending) (*Ingested, func(context.Context), error) {
	if err := c.Full(); err != nil {
		return nil, nil, err
	}
	if body != nil {
		return nil, nil, c.Settle(ctx, body)
	}
	out, send, err := s.ingest(ctx, a, in, c)
	if err != nil {
		return nil, nil, c.Settle(ctx, err)
	}
	return out, send, nil
}

// ingest is Ingest of a body that decoded.
func (s *Service) ingest(ctx context.Context, a *device.Agent, in IngestInput, c *ratelimit.Pending) (*Ingested, func(context.Context), error) {
	obs, err := ingestObservation(a, in)
	if err != nil {
		return nil, nil, err
	}
	chain, err := s.chain(ctx, a.OrgID)
	if err != nil {
		return nil, nil, err
	}
	now := s.Clock.Now()
	d := decide(chain, obs, now)
	if d.Status == StatusIgnored {
		return s.ignore(ctx, a, obs, d, c)
	}
	r, typ := s.newRequest(a, obs, in.PID, d, now)
	ev, err := event.New(s.Clock, typ, r.OrgID, EventData(r, r.Status, map[string]any{"decisionSource": r.DecisionSource,
		"pamRuleId": r.PamRuleID, "matchedPolicyName": r.MatchedPolicyName, "expiresAt": r.ExpiresAt}))
	if err != nil {
		return nil, nil, err
	}
	var send func(context.Context)
	build := func() *store.Tx {
		return (&store.Tx{}).Add(CreateRequestWrite(r, s.PendingTTL),
			audit.Put(s.Clock, audit.Entry{Actor: agentActor(a), OrgID: r.OrgID, PartnerID: r.PartnerID, Action: "agent.elevation_request.submit",
				ResourceType: "elevation_request", ResourceID: r.ID, ResourceName: r.TargetExecutablePath,
				Details: map[string]any{"status": r.Status, "decisionSource": r.DecisionSource, "pamRuleId": r.PamRuleID,
					"matchedPolicyName": r.MatchedPolicyName, "skipped": d.Skipped, "evaluatorError": d.Err}}))
	}
	err = c.Commit(ctx, build, func(tx *store.Tx) error {
		var err error
		send, err = s.Events.CommitDeferred(ctx, tx, ev)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	// The mobile approval fan-out of a pending request is queued by its
	// elevation.requested event (shared/push, run by the webhook-worker).
	return &Ingested{ID: &r.ID, Status: r.Status}, send, nil
}

// ingestObservation validates what the agent of a sent into the observation
// the chain decides.
func ingestObservation(a *device.Agent, in IngestInput) (Observation, error) {
	f := fault.Fields{}
	obs := Observation{OrgID: a.OrgID, DeviceID: a.DeviceID, FlowType: policy.FlowUACIntercept,
		SubjectUsername:      ingestString(f, "subject_username", in.SubjectUsername, true, MaxSubject),
		TargetExecutablePath: ingestString(f, "target_executable_path", in.TargetExecutablePath, true, MaxPath),
		TargetExecutableHash: strings.ToLower(ingestString(f, "target_executable_hash", in.TargetExecutableHash, false, 64)),
	}
	if obs.TargetExecutableHash != "" {
		if b, err := hex.DecodeString(obs.TargetExecutableHash); err != nil || len(b) != 32 {
			f.Add("target_executable_hash", "must be a SHA-256 hex digest")
		}
	}
	obs.TargetExecutableSigner = ingestString(f, "target_executable_signer", in.TargetExecutableSigner, false, MaxSignerField)
	obs.ParentImage = ingestString(f, "parent_image", in.ParentImage, false, MaxPath)
	obs.CommandLine = ingestString(f, "command_line", in.CommandLine, false, MaxCommandLine)
	if in.PID != nil && (*in.PID < 0 || *in.PID > 1<<32) {
		f.Add("pid", "must be a process id (0 to 4294967296)")
	}
	if in.ObservedAt != nil {
		obs.ObservedAt = valid.Time(f, "observed_at", *in.ObservedAt)
	}
	if err := f.Err(); err != nil {
		return Observation{}, err
	}
	if a.SiteID != nil {
		obs.SiteID = *a.SiteID
	}
	if in.PID != nil {
		obs.PID = int(*in.PID)
	}
	return obs, nil
}

// agentActor is the audit actor of a's agent.
func agentActor(a *device.Agent) audit.Actor {
	return audit.Actor{ID: a.DeviceID, Type: string(authz.KindAgent)}
}

// ignore records an ignore verdict: an audit record and c's count, no request.
func (s *Service) ignore(ctx context.Context, a *device.Agent, obs Observation, d decision, c *ratelimit.Pending) (*Ingested, func(context.Context), error) {
	details := map[string]any{"subjectUsername": obs.SubjectUsername, "targetExecutablePath": obs.TargetExecutablePath, "pamRuleId": d.RuleID, "pamRuleName": d.RuleName}
	build := func() *store.Tx {
		return (&store.Tx{}).Add(audit.Put(s.Clock, audit.Entry{Actor: agentActor(a), OrgID: a.OrgID, PartnerID: a.PartnerID,
			Action: "agent.elevation_request.ignored", ResourceType: "elevation_request", ResourceName: obs.TargetExecutablePath, Details: details}))
	}
	if err := c.Commit(ctx, build, func(tx *store.Tx) error { return s.St.Commit(ctx, tx) }); err != nil {
		return nil, nil, fmt.Errorf("ingest elevation request: %w", err)
	}
	return &Ingested{Status: StatusIgnored}, nil, nil
}

// newRequest is the request the chain's decision d makes of obs, and the type
// of the event that announces it: an auto-approval expires after its
// minutes, a denial is final at its creation.
func (s *Service) newRequest(a *device.Agent, obs Observation, pid *int64, d decision, now time.Time) (*Request, string) {
	ts := clock.Format(now)
	r := &Request{ID: NewRequestID(now), OrgID: a.OrgID, PartnerID: a.PartnerID, DeviceID: a.DeviceID, SiteID: a.SiteID,
		FlowType: FlowUAC, Status: d.Status, SubjectUsername: obs.SubjectUsername, TargetExecutablePath: obs.TargetExecutablePath,
		TargetExecutableSigner: obs.TargetExecutableSigner, TargetExecutableHash: obs.TargetExecutableHash, ParentImage: obs.ParentImage,
		CommandLine: obs.CommandLine, PID: pid, RequestedAt: ts, UpdatedAt: ts}
	if a.GroupID != "" {
		r.GroupIDs = []string{a.GroupID}
	}
	if !obs.ObservedAt.IsZero() {
		r.ObservedAt = clock.Format(obs.ObservedAt)
	}
	minutes := d.Minutes
	if minutes < 1 || minutes > MaxDuration {
		minutes = DefaultDuration
	}
	if d.RuleID != "" {
		r.PamRuleID, r.PamRuleName = &d.RuleID, &d.RuleName
	}
	if d.PolicyName != "" {
		r.MatchedPolicyName = &d.PolicyName
	}
	if d.Status != StatusPending && d.Source != "" {
		src := d.Source
		r.DecisionSource = &src
	}
	typ := eventtype.ElevationRequested
	switch d.Status {
	case StatusAutoApproved:
		typ = eventtype.ElevationAutoApproved
		e := clock.Format(now.Add(time.Duration(minutes) * time.Minute))
		r.ExpiresAt = &e
	case StatusDenied:
		typ = eventtype.ElevationDenied
		r.TTL = s.retainUntil(now) // final at its creation
	}
	return r, typ
}
