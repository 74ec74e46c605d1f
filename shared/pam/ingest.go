package pam

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/pam/policy"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
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
// (software-policy bridge, rules, default verdict), and settles its count c
// against the device's ingest window (nil: counted already), which the
// agent's token check admitted. The prompt is first taken to its outcome
// with nothing written: body (the decode's refusal of the request body, or
// nil), the validation, the read of the organization's PAM# rows (the
// compiled chain is cached per organization and rules version, see
// chainCache), the decision, and the rows and event it makes. c.Settle then
// ends it: a refusal is counted on its own, an outcome is written in one
// transaction (the request unless ignored, its audit record, its event, and
// c's count). It answers the event's send, which the caller runs before its
// answer (an unsent event is sent by the outbox drain); the event queues the
// mobile approval fan-out of a pending request (shared/push).
func (s *Service) Ingest(ctx context.Context, a *device.Agent, in IngestInput, body error, c *ratelimit.Pending) (*Ingested, func(context.Context), error) {
	o, err := s.decided(ctx, a, in, body)
	var send func(context.Context)
	err = c.Settle(ctx, err, o.writes, func(tx *store.Tx) error {
		if o.event == nil {
			if err := s.St.Commit(ctx, tx); err != nil {
				return fmt.Errorf("ingest elevation request: %w", err)
			}
			return nil
		}
		var err error
		send, err = s.Events.CommitDeferred(ctx, tx, o.event)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return o.answer, send, nil
}

// decided is what the prompt of a comes to, or why it is refused, with
// nothing written.
func (s *Service) decided(ctx context.Context, a *device.Agent, in IngestInput, body error) (outcome, error) {
	if body != nil {
		return outcome{}, body
	}
	obs, err := ingestObservation(a, in)
	if err != nil {
		return outcome{}, err
	}
	items, v, err := s.St.policyRows(ctx, a.OrgID)
	if err != nil {
		return outcome{}, err
	}
	chain, err := s.chain(a.OrgID, items, v)
	if err != nil {
		return outcome{}, err
	}
	now := s.Clock.Now()
	d := decide(chain, obs, now)
	return s.outcome(a, obs, in.PID, d, now)
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
