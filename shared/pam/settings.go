package pam

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// Levels of the `pam` policy feature, farthest first.
const (
	LevelPartner = "partner"
	LevelOrg     = "organization"
	LevelSite    = "site"
	LevelGroup   = "group"
	LevelDevice  = "device"
)

// Errors of the policy-settings routes.
var (
	ErrTargetNotFound = fault.NotFound("Policy target not found")
)

// SettingInput is the PUT /pam/policy-settings body.
type SettingInput struct {
	Level                  *string         `json:"level"`
	TargetID               *string         `json:"targetId"`
	UACInterceptionEnabled valid.Opt[bool] `json:"uacInterceptionEnabled"`
}

// Setting is the PUT answer.
type Setting struct {
	Success                bool   `json:"success"`
	Level                  string `json:"level"`
	TargetID               string `json:"targetId"`
	UACInterceptionEnabled *bool  `json:"uacInterceptionEnabled"`
}

// Source names the level an effective value comes from.
type Source struct {
	Level    string `json:"level"`
	TargetID string `json:"targetId"`
}

// Effective is GET /pam/policy-settings/effective's answer; Source is a
// *Source or the string "default".
type Effective struct {
	UACInterceptionEnabled bool `json:"uacInterceptionEnabled"`
	Source                 any  `json:"source"`
}

// Resolve is the effective uacInterceptionEnabled of a device: the closest
// level that sets it (device, group, site, organization, partner), else the
// default true.
func Resolve(org, partner *Settings, orgID, partnerID, siteID, groupID, deviceID string) Effective {
	if org != nil {
		if v, ok := org.Devices[deviceID]; ok && deviceID != "" {
			return Effective{v, &Source{LevelDevice, deviceID}}
		}
		if v, ok := org.Groups[groupID]; ok && groupID != "" {
			return Effective{v, &Source{LevelGroup, groupID}}
		}
		if v, ok := org.Sites[siteID]; ok && siteID != "" {
			return Effective{v, &Source{LevelSite, siteID}}
		}
		if org.Value != nil {
			return Effective{*org.Value, &Source{LevelOrg, orgID}}
		}
	}
	if partner != nil && partner.Value != nil {
		return Effective{*partner.Value, &Source{LevelPartner, partnerID}}
	}
	return Effective{true, "default"}
}

// UACEnabled is the effective setting of the device of agent row a (the
// heartbeat's pam.uacInterceptionEnabled): one eventually consistent
// BatchGetItem (half the read units of a strong one, on every heartbeat; a
// change reaches the device within its next heartbeat or two).
func (s *Service) UACEnabled(ctx context.Context, a *device.Agent) (bool, error) {
	org, partner, err := s.St.SettingsRows(ctx, store.Eventual, a.OrgID, a.PartnerID)
	if err != nil {
		return false, err
	}
	site := ""
	if a.SiteID != nil {
		site = *a.SiteID
	}
	return Resolve(org, partner, a.OrgID, a.PartnerID, site, a.GroupID, a.DeviceID).UACInterceptionEnabled, nil
}

// deviceFor reads device id's agent row for p (tenant.Find, both reads the
// agent row by id): 404 beyond its tenants and, for reads, outside its
// restriction; 403 for writes there.
func (s *Service) deviceFor(ctx context.Context, p *authz.Principal, id string, write bool) (*device.Agent, error) {
	agents := device.Store{St: s.St.St}
	a, err := tenant.Find(ctx, p, id, func(ctx context.Context, _, id string) (*device.Agent, error) {
		return agents.Agent(ctx, id)
	}, agents.Agent, ErrDeviceNotFound)
	if err != nil {
		return nil, err
	}
	site := ""
	if a.SiteID != nil {
		site = *a.SiteID
	}
	var groups []string
	if a.GroupID != "" {
		groups = []string{a.GroupID}
	}
	if !p.CanAccessSite(site) || !p.CanAccessDeviceGroups(groups) {
		if write {
			return nil, ErrSiteAccess
		}
		return nil, ErrDeviceNotFound
	}
	return a, nil
}

// EffectiveSetting answers the effective value for device deviceID.
func (s *Service) EffectiveSetting(ctx context.Context, deviceID string) (*Effective, error) {
	p, err := reader(ctx)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	if deviceID == "" {
		f.Add("deviceId", "is required")
	} else {
		valid.UUID(f, "deviceId", deviceID)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	a, err := s.deviceFor(ctx, p, deviceID, false)
	if err != nil {
		return nil, err
	}
	org, partner, err := s.St.SettingsRows(ctx, store.Strong, a.OrgID, a.PartnerID)
	if err != nil {
		return nil, err
	}
	site := ""
	if a.SiteID != nil {
		site = *a.SiteID
	}
	e := Resolve(org, partner, a.OrgID, a.PartnerID, site, a.GroupID, a.DeviceID)
	return &e, nil
}

// PutSetting sets or clears (null) one level's uacInterceptionEnabled.
func (s *Service) PutSetting(ctx context.Context, in SettingInput) (*Setting, error) {
	p, err := ruleWriter(ctx)
	if err != nil {
		return nil, err
	}
	level, target, err := validateSetting(in)
	if err != nil {
		return nil, err
	}
	v := in.UACInterceptionEnabled.Value
	orgID, partnerID, err := s.settingTarget(ctx, p, level, target)
	if err != nil {
		return nil, err
	}
	var k store.KeyRef
	switch level {
	case LevelPartner:
		k = PartnerSettingsKey(target)
	case LevelOrg:
		k = OrgSettingsKey(orgID)
	default:
		k = OrgSettingsKey(orgID)
		if err := s.St.St.Do(ctx, settingsInit(k)); err != nil {
			return nil, fmt.Errorf("pam settings of %s: %w", orgID, err)
		}
	}
	tx := (&store.Tx{}).Add(settingWrite(k, level, target, v), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: orgID, PartnerID: partnerID,
		Action: "pam.policy_settings.update", ResourceType: "pam_policy_settings", ResourceID: target,
		Details: map[string]any{"level": level, "uacInterceptionEnabled": v}}))
	if err := s.St.Commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("put pam setting: %w", err)
	}
	return &Setting{Success: true, Level: level, TargetID: target, UACInterceptionEnabled: v}, nil
}

// validateSetting answers the level and target of in, or the fields at fault.
func validateSetting(in SettingInput) (level, target string, err error) {
	f := fault.Fields{}
	level = valid.Required(f, "level", in.Level)
	if in.Level != nil {
		valid.OneOf(f, "level", level, LevelPartner, LevelOrg, LevelSite, LevelGroup, LevelDevice)
	}
	target = valid.Required(f, "targetId", in.TargetID)
	if in.TargetID != nil {
		valid.UUID(f, "targetId", target)
	}
	switch {
	case in.UACInterceptionEnabled.Bad:
		f.Add("uacInterceptionEnabled", "must be true, false or null")
	case !in.UACInterceptionEnabled.Set:
		f.Add("uacInterceptionEnabled", "is required (null clears the level)")
	}
	return level, target, f.Err()
}

// settingTarget checks that p may set the level's target and answers the
// organization (none for a partner level) and partner the setting is theirs.
func (s *Service) settingTarget(ctx context.Context, p *authz.Principal, level, target string) (orgID, partnerID string, err error) {
	switch level {
	case LevelPartner:
		if !p.CanAccessPartner(target) {
			return "", "", ErrTargetNotFound
		}
		if err := p.RequireFullPartnerAccess(); err != nil {
			return "", "", err
		}
		return "", target, nil
	case LevelOrg:
		o, err := s.Orgs.Reach(ctx, p, target)
		if err != nil {
			return "", "", err
		}
		if err := p.RequireUnrestricted(); err != nil {
			return "", "", err
		}
		return o.ID, o.PartnerID, nil
	case LevelSite:
		st, err := s.Orgs.SiteByID(ctx, target)
		if err != nil {
			return "", "", s.targetErr(err)
		}
		o, err := s.Orgs.Reach(ctx, p, st.OrgID)
		if err != nil {
			return "", "", ErrTargetNotFound
		}
		if !p.CanAccessSite(st.ID) || (p.Scope == authz.ScopeOrg && len(p.DeviceGroupIDs) > 0) {
			return "", "", ErrSiteAccess
		}
		return o.ID, o.PartnerID, nil
	case LevelGroup:
		return s.groupTarget(ctx, p, target)
	default: // LevelDevice (validateSetting admits no other)
		a, err := s.deviceFor(ctx, p, target, true)
		if err != nil {
			return "", "", err
		}
		return a.OrgID, a.PartnerID, nil
	}
}

// groupTarget is settingTarget of a device group: p must reach its
// organization, its site and the group.
func (s *Service) groupTarget(ctx context.Context, p *authz.Principal, target string) (orgID, partnerID string, err error) {
	g, err := s.Orgs.GroupByID(ctx, target)
	if err != nil {
		return "", "", s.targetErr(err)
	}
	o, err := s.Orgs.Reach(ctx, p, g.OrgID)
	if err != nil {
		return "", "", ErrTargetNotFound
	}
	site := ""
	if g.SiteID != nil {
		site = *g.SiteID
	}
	if !p.CanAccessSite(site) || !p.CanAccessDeviceGroups([]string{g.ID}) {
		return "", "", ErrSiteAccess
	}
	return o.ID, o.PartnerID, nil
}

func (s *Service) targetErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return ErrTargetNotFound
	}
	return err
}

// SettingsRoutes registers PUT /pam/policy-settings (devices:write + MFA)
// and GET /pam/policy-settings/effective (devices:read). PUT reads the
// target and the organization, initialises the map for site, group and
// device levels, then writes one transaction; GET reads the agent row and
// the two PAMSET rows (one BatchGetItem). Budgets: docs/budgets.md, from tests/fixture/budgets.go.
func (h *Handler) SettingsRoutes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodPut, Path: "/api/v1/pam/policy-settings", Access: httpapi.UserOrKey, Scopes: []string{"devices:write"}, MFA: true, Handle: h.putSetting},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/pam/policy-settings/effective", Access: httpapi.UserOrKey, Scopes: []string{"devices:read"}, Handle: h.effective},
	)
}

func (h *Handler) putSetting(w http.ResponseWriter, r *http.Request) error {
	var in SettingInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	out, err := h.Svc.PutSetting(r.Context(), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) effective(w http.ResponseWriter, r *http.Request) error {
	out, err := h.Svc.EffectiveSetting(r.Context(), r.URL.Query().Get("deviceId"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}
