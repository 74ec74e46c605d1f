package pam

import (
	"context"
	"errors"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// AgentDecision is what the agent of a request's device learns of it
// (GET /agents/:id/elevation-requests/:requestId): the request's status and,
// while an elevation is granted, when it ends.
type AgentDecision struct {
	ID        string  `json:"id"`
	Status    string  `json:"status"`
	ExpiresAt *string `json:"expiresAt"`
}

// ForAgent answers request id to the agent of device a, which the caller has
// authenticated (shared/agent). A request of another device answers 404, as
// an unknown one does: an agent learns nothing of requests it did not report.
// One GetItem.
func (s *Service) ForAgent(ctx context.Context, a *device.Agent, id string) (*AgentDecision, error) {
	if err := valid.PathID("requestId", id); err != nil {
		return nil, err
	}
	r, err := s.St.Request(ctx, a.OrgID, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.DeviceID != a.DeviceID) {
		return nil, ErrRequestNotFound
	}
	if err != nil {
		return nil, err
	}
	out := &AgentDecision{ID: r.ID, Status: r.Status}
	switch r.Status {
	case StatusApproved, StatusAutoApproved, StatusActuating:
		out.ExpiresAt = r.ExpiresAt
	}
	return out, nil
}
