package pam

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// This file makes a new elevation request and its rows: what an agent's
// prompt comes to once decided (the request, its event, its audit record),
// and every key the request's rows carry (primary, GSI1, the sweeper's GSI2
// shards, the list partitions), so the prompt's writes are built in one
// place, before anything is written.

// outcome is what a decided prompt writes, built before any write: the
// answer, the rows of its one transaction (the request unless ignored, and
// its audit record) and its event (nil when ignored).
type outcome struct {
	answer *Ingested
	writes []*store.Write
	event  *event.Pending
}

// outcome is what the prompt obs of a comes to under the chain's decision d
// at now: an ignore verdict is an audit record alone, any other a request.
func (s *Service) outcome(a *device.Agent, obs Observation, pid *int64, d decision, now time.Time) (outcome, error) {
	actor := agentActor(a)
	if d.Status == StatusIgnored {
		return outcome{answer: &Ingested{Status: StatusIgnored}, writes: []*store.Write{audit.Put(s.Clock, audit.Entry{Actor: actor,
			OrgID: a.OrgID, PartnerID: a.PartnerID, Action: "agent.elevation_request.ignored", ResourceType: "elevation_request",
			ResourceName: obs.TargetExecutablePath, Details: map[string]any{"subjectUsername": obs.SubjectUsername,
				"targetExecutablePath": obs.TargetExecutablePath, "pamRuleId": d.RuleID, "pamRuleName": d.RuleName}})}}, nil
	}
	r, typ := s.newRequest(a, obs, pid, d, now)
	data := EventData(r, r.Status, map[string]any{"decisionSource": r.DecisionSource,
		"pamRuleId": r.PamRuleID, "matchedPolicyName": r.MatchedPolicyName, "expiresAt": r.ExpiresAt})
	created := CreateRequestWrite(r, s.PendingTTL)
	ev, err := event.New(s.Clock, typ, r.OrgID, data)
	if err != nil {
		return outcome{}, err
	}
	return outcome{answer: &Ingested{ID: &r.ID, Status: r.Status}, event: ev, writes: []*store.Write{created,
		audit.Put(s.Clock, audit.Entry{Actor: actor, OrgID: r.OrgID, PartnerID: r.PartnerID, Action: "agent.elevation_request.submit",
			ResourceType: "elevation_request", ResourceID: r.ID, ResourceName: r.TargetExecutablePath,
			Details: map[string]any{"status": r.Status, "decisionSource": r.DecisionSource, "pamRuleId": r.PamRuleID,
				"matchedPolicyName": r.MatchedPolicyName, "skipped": d.Skipped, "evaluatorError": d.Err}})}}, nil
}

// agentActor is the audit actor of a's agent.
func agentActor(a *device.Agent) audit.Actor {
	return audit.Actor{ID: a.DeviceID, Type: string(authz.KindAgent)}
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

// EventData is the data of an elevation.* event about r, now in status.
func EventData(r *Request, status string, extra map[string]any) map[string]any {
	d := map[string]any{"elevationRequestId": r.ID, "deviceId": r.DeviceID, "siteId": r.SiteID, "flowType": r.FlowType,
		"status": status, "subjectUsername": r.SubjectUsername, "targetExecutablePath": r.TargetExecutablePath,
		"targetExecutableSigner": r.TargetExecutableSigner, "requestedAt": r.RequestedAt}
	for k, v := range extra {
		d[k] = v
	}
	return d
}

// CreateRequestWrite stores a new request with the index keys of its status
// (and, when it is created denied, the ttl its caller set).
func CreateRequestWrite(r *Request, pendingTTL time.Duration) *store.Write {
	ttl := r.TTL
	r.Keys = RequestKeys(r.OrgID, r.ID)
	r.TTL = ttl
	switch r.Status {
	case StatusPending:
		r.GSI2PK, r.GSI2SK = pendingKeys(r.OrgID, r.ID, r.RequestedAt)
	case StatusAutoApproved, StatusApproved, StatusActuating:
		if r.ExpiresAt != nil {
			r.GSI2PK, r.GSI2SK = expiryKeys(r.OrgID, r.ID, *r.ExpiresAt)
		}
	}
	SetListKeys(r)
	return store.PutNew(r)
}

// RequestKeys are the primary and GSI1 keys of request id of orgID.
func RequestKeys(orgID, id string) store.Keys {
	return store.OrgRows[Request]{Kind: "ELEV"}.Keys(orgID, id)
}

func shard(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return fmt.Sprintf("%02d", h.Sum32()%shards)
}

// expiryKeys index a request that expires at expiresAt.
func expiryKeys(orgID, id, expiresAt string) (string, string) {
	return "ELEVEXP#" + shard(id), expiresAt + "#" + orgID + "#" + id
}

// pendingKeys index a pending request by requestedAt.
func pendingKeys(orgID, id, requestedAt string) (string, string) {
	return "ELEVPEND#" + shard(id), requestedAt + "#" + orgID + "#" + id
}

// ---- elevation request lists ------------------------------------------------

// OrgListPK is the GSI4 partition of orgID's elevation requests before its
// part: the requests in status st are in OrgListPK(orgID)+"#"+listPart(st).
func OrgListPK(orgID string) string { return store.OrgPK(orgID) + "#ELEV" }

// PartnerListPK is the GSI3 partition of partnerID's elevation requests
// before its part (as OrgListPK).
func PartnerListPK(partnerID string) string { return store.PartnerPK(partnerID) + "#ELEV" }

// partLive is the list part of the statuses a request leaves within a day
// (pending, approved, auto_approved, actuating: the sweeper expires them), so
// that part holds the live requests only, never history.
const partLive = "LIVE"

// listParts are the parts of an organization's (or partner's) list: the live
// requests, and one per final status, which history fills.
var listParts = []string{partLive, StatusDenied, StatusExpired, StatusRevoked}

// listPart is the list part of the requests in status st.
func listPart(st string) string {
	switch st {
	case StatusDenied, StatusExpired, StatusRevoked:
		return st
	}
	return partLive
}

// listSK is r's sort key in its list partitions: newest first by requestedAt
// (read descending; ties by id ascending, store.NewestSK), then its flow type,
// which the list indexes do not project but the list filters on (listFields).
func listSK(r *Request) string {
	return store.NewestSK(r.RequestedAt, r.ID) + "#" + r.FlowType
}

// SetListKeys puts r into the list partitions of its status's part.
func SetListKeys(r *Request) {
	k := listKeys(r, r.Status)
	r.GSI3PK, r.GSI3SK, r.GSI4PK, r.GSI4SK = k.GSI3PK, k.GSI3SK, k.GSI4PK, k.GSI4SK
}

// listKeys are r's list-index keys in status st.
func listKeys(r *Request, st string) store.Keys {
	part, sk := listPart(st), listSK(r)
	var k store.Keys
	k.SetList(func(id string) string { return PartnerListPK(id) + "#" + part },
		func(id string) string { return OrgListPK(id) + "#" + part }, r.PartnerID, r.OrgID, sk)
	return k
}
