package device

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// PatchInput is the PATCH body; groupId and displayName may be null (clear).
type PatchInput struct {
	DisplayName  valid.Opt[string]            `json:"displayName"`
	Tags         valid.Opt[[]string]          `json:"tags"`
	CustomFields valid.Opt[map[string]string] `json:"customFields"`
	GroupID      valid.Opt[string]            `json:"groupId"`
}

// Update applies PATCH /devices/:id: decode (PatchInput), validate into a
// Patch (check), diff against the device (patchTx), then one transaction
// with its audit entry and event.
func (s *Service) Update(ctx context.Context, id string, in PatchInput) (*Device, error) {
	p, err := authz.Require(ctx, authz.DevicesWrite)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	patch, err := in.check()
	if err != nil {
		return nil, err
	}
	changed := in.fields()
	if len(changed) == 0 {
		return nil, ErrNoUpdates
	}
	d, err := s.device(ctx, p, id)
	if err != nil {
		return nil, err
	}
	tx, groupAt, err := s.patchTx(ctx, p, d, patch)
	if err != nil {
		return nil, err
	}
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: d.OrgID, Action: "device.update",
		ResourceType: "device", ResourceID: id, ResourceName: d.Hostname, Details: map[string]any{"changed": changed}}))
	ev, err := event.New(s.Clock, eventtype.DeviceUpdated, d.OrgID, map[string]any{"deviceId": id, "hostname": d.Hostname, "changed": changed})
	if err != nil {
		return nil, err
	}
	if err := s.Events.Commit(ctx, tx, ev); err != nil {
		switch {
		case groupAt >= 0 && FailedAt(err, groupAt):
			return nil, ErrGroupNotFound
		case FailedAt(err, 0):
			return nil, ErrConcurrent
		}
		return nil, fmt.Errorf("update device %s: %w", id, err)
	}
	return s.St.Get(ctx, d.OrgID, id)
}

// fields are the fields the body named, sorted (audit entry and event).
func (in PatchInput) fields() []string {
	out := []string{}
	for _, f := range []struct {
		name string
		set  bool
	}{{"customFields", in.CustomFields.Set}, {"displayName", in.DisplayName.Set}, {"groupId", in.GroupID.Set}, {"tags", in.Tags.Set}} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// check validates the body into a Patch; field errors are its error.
func (in PatchInput) check() (Patch, error) {
	f := fault.Fields{}
	var patch Patch
	switch o := in.DisplayName; {
	case o.Wrong(f, "displayName", "a string or null"):
	case o.Set && o.Value == nil:
		patch.ClearName = true
	case o.Set:
		n := strings.TrimSpace(*o.Value)
		valid.Name(f, "displayName", n, 255)
		controls(f, "displayName", n)
		patch.DisplayName = &n
	}
	switch o := in.Tags; {
	case o.Bad || (o.Set && o.Value == nil):
		f.Add("tags", "must be an array of strings")
	case o.Set:
		patch.Tags = checkTags(f, *o.Value)
	}
	switch o := in.CustomFields; {
	case o.Bad || (o.Set && o.Value == nil):
		f.Add("customFields", "must be an object of string values")
	case o.Set:
		checkCustomFields(f, *o.Value)
		patch.CustomFields = o.Value
	}
	switch o := in.GroupID; {
	case o.Wrong(f, "groupId", "a UUID or null"):
	case o.Set:
		patch.SetGroup = true
		if o.Value != nil {
			valid.UUID(f, "groupId", *o.Value)
			patch.Group = *o.Value
		}
	}
	return patch, f.Err()
}

// checkTags trims tags, checks each and drops repeats.
func checkTags(f fault.Fields, in []string) *[]string {
	tags := []string{}
	seen := map[string]bool{}
	if len(in) > MaxTags {
		f.Addf("tags", "must have at most %d entries", MaxTags)
	}
	for i, t := range in {
		t = strings.TrimSpace(t)
		path := fmt.Sprintf("tags.%d", i)
		valid.Len(f, path, t, 1, MaxTag)
		controls(f, path, t)
		if !seen[t] {
			seen[t] = true
			tags = append(tags, t)
		}
	}
	return &tags
}

// checkCustomFields checks the number of custom fields, their keys and values.
func checkCustomFields(f fault.Fields, cf map[string]string) {
	if len(cf) > MaxCustom {
		f.Addf("customFields", "must have at most %d entries", MaxCustom)
	}
	for k, v := range cf {
		if !customKey.MatchString(k) {
			f.Add("customFields."+k, "key must be lowercase, start with a letter and hold only letters, digits and underscores (at most 64)")
		}
		if utf8.RuneCountInString(v) > MaxCustomValue {
			f.Addf("customFields."+k, "must be at most %d characters", MaxCustomValue)
		}
	}
}

// patchTx diffs a checked patch against device d: the device write first
// (index 0; a group move holds only while the device is still in the group it
// was read in). A move to another group, which the caller must be allowed to
// use, also counts the device into the new group (index groupAt, -1 without
// one) and out of the old one and mirrors the move on the agent row; a groupId
// equal to the current one moves nothing.
func (s *Service) patchTx(ctx context.Context, p *authz.Principal, d *Device, patch Patch) (tx *store.Tx, groupAt int, err error) {
	patch.OldGroup = d.GroupID
	if patch.SetGroup && patch.Group == d.GroupID {
		patch.SetGroup = false
	}
	if patch.SetGroup {
		if err := s.checkGroupMove(ctx, p, d.OrgID, patch.Group); err != nil {
			return nil, -1, err
		}
	}
	tx = (&store.Tx{}).Add(PatchWrite(d.OrgID, d.ID, patch, s.Clock.Now()))
	groupAt = -1
	if !patch.SetGroup {
		return tx, groupAt, nil
	}
	if patch.Group != "" {
		groupAt = tx.Len()
		tx.Add(tenant.CountGroup(d.OrgID, patch.Group, 1))
	}
	if d.GroupID != "" {
		tx.Add(tenant.CountGroup(d.OrgID, d.GroupID, -1))
	}
	tx.Add(AgentGroupWrite(d.ID, patch.Group))
	return tx, groupAt, nil
}

// checkGroupMove refuses a move a group-restricted caller may not make (out of
// their groups, or to none) and a group outside the caller's reach.
func (s *Service) checkGroupMove(ctx context.Context, p *authz.Principal, orgID, group string) error {
	if groupRestricted(p) && (group == "" || !slices.Contains(p.DeviceGroupIDs, group)) {
		return ErrGroupScope
	}
	if group == "" {
		return nil
	}
	// The group must lie within the caller's reach too (its site).
	ok, err := s.Orgs.GroupInReach(ctx, p, orgID, group)
	if err != nil {
		return err
	}
	if !ok {
		return ErrGroupNotFound
	}
	return nil
}
