package pam

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/pam/policy"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// Software policy modes.
const (
	ModeAllowlist = "allowlist"
	ModeBlocklist = "blocklist"
)

// SoftwarePolicyInput is the body of software-policy create and PATCH.
type SoftwarePolicyInput struct {
	OrgID       string                  `json:"orgId"`
	Name        valid.Opt[string]       `json:"name"`
	Mode        valid.Opt[string]       `json:"mode"`
	Priority    valid.Opt[int]          `json:"priority"`
	Enabled     valid.Opt[bool]         `json:"enabled"`
	Executables valid.Opt[[]Executable] `json:"executables"`
}

func (in *SoftwarePolicyInput) apply(f fault.Fields, p *SoftwarePolicy) {
	if v := in.Name.NotNull(f, "name", "a string"); v != nil {
		p.Name = strings.TrimSpace(*v)
	}
	if v := in.Mode.NotNull(f, "mode", "one of allowlist, blocklist"); v != nil {
		p.Mode = *v
	}
	if v := in.Priority.NotNull(f, "priority", "an integer"); v != nil {
		p.Priority = *v
	}
	if v := in.Enabled.NotNull(f, "enabled", "a boolean"); v != nil {
		p.Enabled = *v
	}
	if v := in.Executables.NotNull(f, "executables", "an array of {hash?, signer?, pathGlob?}"); v != nil {
		p.Executables = *v
	}
}

func validatePolicy(f fault.Fields, p *SoftwarePolicy) {
	f.Merge("", policy.ValidatePolicy(toPolicySoftware(p)))
}

// SoftwarePolicyList is the list answer.
type SoftwarePolicyList struct {
	Success          bool             `json:"success"`
	SoftwarePolicies []SoftwarePolicy `json:"softwarePolicies"`
}

// SoftwarePolicyReply is the create, PATCH and delete answer.
type SoftwarePolicyReply struct {
	Success        bool            `json:"success"`
	SoftwarePolicy *SoftwarePolicy `json:"softwarePolicy"`
}

// SoftwarePolicies lists the software policies the caller reaches, highest
// priority first.
func (s *Service) SoftwarePolicies(ctx context.Context, orgID string) ([]SoftwarePolicy, error) {
	out, err := listPolicies(ctx, s, orgID, s.St.softwarePolicies().All, nil)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b SoftwarePolicy) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), strings.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// CreateSoftwarePolicy stores a software policy (pam.software_policy.create).
func (s *Service) CreateSoftwarePolicy(ctx context.Context, in SoftwarePolicyInput) (*SoftwarePolicy, error) {
	p, err := orgWideWriter(ctx)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	sp := &SoftwarePolicy{Priority: DefaultPriority, Enabled: true, Executables: []Executable{}}
	in.apply(f, sp)
	if !in.Name.Set {
		f.Add("name", "is required")
	}
	if !in.Mode.Set {
		f.Add("mode", "is required")
	}
	o, err := s.createOrg(ctx, p, f, in.OrgID, func(f fault.Fields) { validatePolicy(f, sp) })
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	sp.ID, sp.OrgID, sp.PartnerID, sp.CreatedAt, sp.UpdatedAt = uuid.NewString(), o.ID, o.PartnerID, now, now
	sp.CreatedBy, sp.UpdatedBy, sp.CreatedByEmail, sp.UpdatedByEmail = p.UserID, p.UserID, p.Email, p.Email
	sp.Keys = SoftwarePolicyKeys(o.ID, sp.ID)
	if err := s.commitPolicy(ctx, p, policyChange{Row: store.PutNew(sp), Org: sp.Owner(), ID: sp.ID, Name: sp.Name,
		Action: "pam.software_policy.create", Resource: "pam_software_policy", Details: map[string]any{"mode": sp.Mode, "executables": len(sp.Executables)},
		What: "create software policy"}); err != nil {
		return nil, err
	}
	return sp, nil
}

func (s *Service) softwarePolicy(ctx context.Context, p *authz.Principal, id string) (*SoftwarePolicy, error) {
	return tenant.Find(ctx, p, id, s.St.softwarePolicies().Get, s.St.softwarePolicies().ByID, ErrPolicyNotFound)
}

// UpdateSoftwarePolicy applies a PATCH (pam.software_policy.update).
func (s *Service) UpdateSoftwarePolicy(ctx context.Context, id string, in SoftwarePolicyInput) (*SoftwarePolicy, error) {
	p, sp, err := policyTarget(ctx, orgWideWriter, id, in.OrgID, s.softwarePolicy)
	if err != nil {
		return nil, err
	}
	was := sp.UpdatedAt
	f := fault.Fields{}
	in.apply(f, sp)
	if err := f.Err(); err != nil {
		return nil, err
	}
	validatePolicy(f, sp)
	if err := f.Err(); err != nil {
		return nil, err
	}
	sp.UpdatedBy, sp.UpdatedByEmail, sp.UpdatedAt = p.UserID, p.Email, clock.Format(s.Clock.Now())
	if err := s.commitPolicy(ctx, p, policyChange{Row: replaceWrite(sp, was), Org: sp.Owner(), ID: sp.ID, Name: sp.Name,
		Action: "pam.software_policy.update", Resource: "pam_software_policy",
		Details:  map[string]any{"mode": sp.Mode, "executables": len(sp.Executables), "enabled": sp.Enabled},
		Conflict: ErrChanged, What: "update software policy"}); err != nil {
		return nil, err
	}
	return sp, nil
}

// DeleteSoftwarePolicy removes a software policy (pam.software_policy.delete).
func (s *Service) DeleteSoftwarePolicy(ctx context.Context, id string) (*SoftwarePolicy, error) {
	p, sp, err := policyTarget(ctx, orgWideWriter, id, "", s.softwarePolicy)
	if err != nil {
		return nil, err
	}
	if err := s.commitPolicy(ctx, p, policyChange{Row: store.Delete(sp.PK, sp.SK).Exists(), Org: sp.Owner(), ID: sp.ID, Name: sp.Name,
		Action: "pam.software_policy.delete", Resource: "pam_software_policy", Conflict: ErrPolicyNotFound, What: "delete software policy " + id}); err != nil {
		return nil, err
	}
	return sp, nil
}

// SoftwarePolicyRoutes registers /pam/software-policies (reads devices:read;
// writes devices:write + MFA, refused to restricted callers). The list is one
// Query per organization; create one transaction (after the organization's
// read for partner and system callers); PATCH and DELETE a read and a
// transaction. Budgets: docs/budgets.md, from tests/fixture/budgets.go.
func (h *Handler) SoftwarePolicyRoutes(rt *httpapi.Router) {
	read, write := []string{"devices:read"}, []string{"devices:write"}
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/pam/software-policies", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.softwarePolicies)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/pam/software-policies", Access: httpapi.UserOrKey, Scopes: write, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.createSoftwarePolicy)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/pam/software-policies/{id}", Access: httpapi.UserOrKey, Scopes: write, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.updateSoftwarePolicy)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/pam/software-policies/{id}", Access: httpapi.UserOrKey, Scopes: write, MFA: true, Handle: httpapi.Call(http.StatusOK, h.deleteSoftwarePolicy)},
	)
}

func (h *Handler) softwarePolicies(r *http.Request) (SoftwarePolicyList, error) {
	out, err := h.Svc.SoftwarePolicies(r.Context(), r.URL.Query().Get("orgId"))
	return SoftwarePolicyList{Success: true, SoftwarePolicies: out}, err
}

func (h *Handler) createSoftwarePolicy(r *http.Request, in SoftwarePolicyInput) (SoftwarePolicyReply, error) {
	out, err := h.Svc.CreateSoftwarePolicy(r.Context(), in)
	return SoftwarePolicyReply{Success: true, SoftwarePolicy: out}, err
}

func (h *Handler) updateSoftwarePolicy(r *http.Request, in SoftwarePolicyInput) (SoftwarePolicyReply, error) {
	out, err := h.Svc.UpdateSoftwarePolicy(r.Context(), r.PathValue("id"), in)
	return SoftwarePolicyReply{Success: true, SoftwarePolicy: out}, err
}

func (h *Handler) deleteSoftwarePolicy(r *http.Request) (SoftwarePolicyReply, error) {
	out, err := h.Svc.DeleteSoftwarePolicy(r.Context(), r.PathValue("id"))
	return SoftwarePolicyReply{Success: true, SoftwarePolicy: out}, err
}
