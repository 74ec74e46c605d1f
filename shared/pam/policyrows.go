package pam

import (
	"context"
	"errors"
	"fmt"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// policyRows is the one repository of an organization's PAM policy rows of
// one kind (rules, signer groups, software policies): PK ORG#<oid>, SK
// PAM#<Kind>#<id>, GSI1PK PAMREF#<id>, GSI1SK <Kind>. It is store.OrgRows with
// the PAM# prefix every policy row carries, so that one Query of PAM# reads
// an organization's whole policy set (Store.Policies).
type policyRows[T any] struct {
	St   *store.Store
	Kind string // "RULE", "SG", "SWP"
	What string // "pam rule", "signer group", "software policy" (error texts)
}

func policyKeys(kind, orgID, id string) store.Keys {
	return store.Keys{PK: store.OrgPK(orgID), SK: "PAM#" + kind + "#" + id, GSI1PK: "PAMREF#" + id, GSI1SK: kind}
}

// All reads every row of this kind of organization orgID.
func (r policyRows[T]) All(ctx context.Context, orgID string) ([]T, error) {
	out := []T{}
	if err := r.St.AllInto(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "PAM#" + r.Kind + "#"}, &out); err != nil {
		return nil, fmt.Errorf("%ss of %s: %w", r.What, orgID, err)
	}
	return out, nil
}

// Get reads row id of organization orgID (one GetItem).
func (r policyRows[T]) Get(ctx context.Context, orgID, id string) (*T, error) {
	var v T
	if err := r.St.Get(ctx, store.OrgPK(orgID), "PAM#"+r.Kind+"#"+id, &v); err != nil {
		return nil, fmt.Errorf("get %s %s: %w", r.What, id, err)
	}
	return &v, nil
}

// ByID finds row id of whatever organization (one GSI1 Query); the caller
// checks the organization is within reach.
func (r policyRows[T]) ByID(ctx context.Context, id string) (*T, error) {
	var out []T
	if err := r.St.AllInto(ctx, store.Query{Index: store.GSI1, PK: "PAMREF#" + id, SKPrefix: r.Kind}, &out); err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.What, id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s %s: %w", r.What, id, store.ErrNotFound)
	}
	return &out[0], nil
}

func (s Store) rules() policyRows[Rule] {
	return policyRows[Rule]{St: s.St, Kind: "RULE", What: "pam rule"}
}

func (s Store) signerGroups() policyRows[SignerGroup] {
	return policyRows[SignerGroup]{St: s.St, Kind: "SG", What: "signer group"}
}

func (s Store) softwarePolicies() policyRows[SoftwarePolicy] {
	return policyRows[SoftwarePolicy]{St: s.St, Kind: "SWP", What: "software policy"}
}

// listPolicies is the list of every policy kind: the reader's authorization,
// orgId's shape when given, then all rows of kind read from each organization
// named (orgId) or reached, those keep keeps (nil keeps all).
func listPolicies[T any](ctx context.Context, s *Service, orgID string, all func(context.Context, string) ([]T, error), keep func(*authz.Principal, *T) bool) ([]T, error) {
	p, err := reader(ctx)
	if err != nil {
		return nil, err
	}
	if orgID != "" {
		if err := valid.PathID("orgId", orgID); err != nil {
			return nil, err
		}
	}
	ids, err := s.orgs(ctx, p, orgID)
	if err != nil {
		return nil, err
	}
	out := []T{}
	for _, id := range ids {
		rows, err := all(ctx, id)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			if keep == nil || keep(p, &rows[i]) {
				out = append(out, rows[i])
			}
		}
	}
	return out, nil
}

// policyTarget is the preamble of a PATCH (orgID is the body's, refused when
// set) or DELETE of a policy row: the writer's authorization, the id's shape,
// then the row within the caller's reach (find).
func policyTarget[T any](ctx context.Context, writer func(context.Context) (*authz.Principal, error), id, orgID string,
	find func(context.Context, *authz.Principal, string) (*T, error)) (*authz.Principal, *T, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, nil, err
	}
	if orgID != "" {
		return nil, nil, fault.Invalid("orgId", "cannot be changed")
	}
	v, err := find(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	return p, v, nil
}

// policyChange is one write of a policy row and what its audit record says.
type policyChange struct {
	Row      *store.Write   // the row's own write
	Refs     *store.Write   // an assertion on what the row names (nil: none)
	Org      authz.Org      // the row's organization
	ID, Name string         // the row's
	Action   string         // "pam.rule.create", ...
	Resource string         // "pam_rule", ...
	Details  map[string]any // the audit record's
	// Conflict is the answer to a failed condition (nil: an error naming What).
	Conflict error
	What     string
}

// commitPolicy writes c in one transaction with the policies version move
// and the audit record.
func (s *Service) commitPolicy(ctx context.Context, p *authz.Principal, c policyChange) error {
	tx := (&store.Tx{}).Add(c.Row, c.Refs, PoliciesChanged(c.Org.ID), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: c.Org.ID, PartnerID: c.Org.PartnerID,
		Action: c.Action, ResourceType: c.Resource, ResourceID: c.ID, ResourceName: c.Name, Details: c.Details}))
	err := s.St.Commit(ctx, tx)
	if err == nil {
		return nil
	}
	if c.Conflict != nil && errors.Is(err, store.ErrConditionFailed) {
		return c.Conflict
	}
	return fmt.Errorf("%s: %w", c.What, err)
}
