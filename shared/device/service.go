package device

import (
	"context"
	"fmt"
	"regexp"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// Orgs reads organizations; tenant.Store satisfies it.
type Orgs interface {
	Reach(ctx context.Context, p *authz.Principal, id string) (*tenant.Organization, error)
	PartnerOrgs(ctx context.Context, partnerID string) ([]tenant.Organization, error)
	AllOrgs(ctx context.Context) ([]tenant.Organization, error)
	OrgsByID(ctx context.Context, ids []string) ([]tenant.Organization, error)
	Reachable(ctx context.Context, p *authz.Principal) ([]string, error)
	GroupInReach(ctx context.Context, p *authz.Principal, orgID, id string) (bool, error)
}

// Service holds the inventory rules and the offline sweep.
type Service struct {
	St     Store
	Orgs   Orgs
	Clock  clock.Clock
	Events *event.Publisher
	// Channel closes a decommissioned device's live connection (the agent
	// channel's pusher); nil without a channel.
	Channel Disconnector
}

// Disconnector closes a device's live agent-channel connection, best effort
// (its token is refused from then on, so it cannot come back).
type Disconnector interface {
	Disconnect(ctx context.Context, deviceID string)
}

// Limits of PATCH /devices/:id.
const (
	MaxTags        = 50
	MaxTag         = 64
	MaxCustom      = 50
	MaxCustomValue = 1024
)

var customKey = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ListFilter is the list query: page and limit, or the cursor of the page
// before (the fast path for deep pages; it wins over page).
type ListFilter struct {
	OrgID, SiteID string
	Page, Limit   int
	Cursor        string
}

// ListPage is one page of devices with the list's total.
type ListPage struct {
	Devices            []Device
	Page, Limit, Total int
	// Next is the cursor of the following page, "" on the last page.
	Next string
}

// List returns one page of the devices the caller can see (site and
// device-group restrictions apply), by hostname, then id: tenant.List over the
// device list indexes (GSI4 per organization, GSI3 per partner; every
// partner's merged for a system caller without orgId), the caller's
// restriction and siteId applied to the index rows, then the page's devices in
// one BatchGetItem. The total is the read's own when it reached the end, else
// the organizations' device counters (maintained by enrollment's
// transaction), or for a restricted caller or a siteId a count of the kept
// index rows.
func (s *Service) List(ctx context.Context, f ListFilter) (*ListPage, error) {
	p, err := authz.RequireTenant(ctx, authz.DevicesRead)
	if err != nil {
		return nil, err
	}
	fe := fault.Fields{}
	if f.OrgID != "" {
		valid.UUID(fe, "orgId", f.OrgID)
	}
	if f.SiteID != "" {
		valid.UUID(fe, "siteId", f.SiteID)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	pg, err := tenant.List(ctx, p, s.listing(), tenant.ListQuery[Device]{OrgID: f.OrgID, Page: f.Page, Limit: f.Limit, Cursor: f.Cursor,
		Keep: func(d *Device) bool {
			return (f.SiteID == "" || (d.SiteID != nil && *d.SiteID == f.SiteID)) && visible(p, d)
		},
		Filtered: f.SiteID != ""})
	if err != nil {
		return nil, err
	}
	return &ListPage{Devices: pg.Items, Page: pg.Page, Limit: pg.Limit, Total: pg.Total, Next: pg.Next}, nil
}

// listing is the device list of the list indexes.
func (s *Service) listing() tenant.Listing[Device] {
	return tenant.Listing[Device]{St: s.St.St, Orgs: s.Orgs, Name: "DEVICES", OrgPK: OrgListPK, PartnerPK: PartnerListPK,
		Counter: func(o *tenant.Organization) int { return o.DeviceCount }, Companion: liveCompanion}
}

// Get returns device id with its software.
func (s *Service) Get(ctx context.Context, id string) (*Device, error) {
	p, err := authz.Require(ctx, authz.DevicesRead)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	d, err := s.device(ctx, p, id)
	if err != nil {
		return nil, err
	}
	d.Software = []Software{}
	if d.SoftwareChunks > 0 {
		var chunks []chunk
		if err := s.St.St.AllInto(ctx, store.Query{PK: store.OrgPK(d.OrgID), SKPrefix: softwarePrefix(id)}, &chunks); err != nil {
			return nil, fmt.Errorf("software of device %s: %w", id, err)
		}
		if d.Software, err = decodeChunks(chunks, d.SoftwareHash); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Decommission retires device id for good: its token stops working.
func (s *Service) Decommission(ctx context.Context, id string) (*Device, error) {
	p, err := authz.Require(ctx, authz.DevicesWrite)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	d, err := s.device(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if d.Status == StatusDecommissioned {
		return nil, ErrDecommissioned
	}
	now := s.Clock.Now()
	ev, err := event.New(s.Clock, eventtype.DeviceDecommissioned, d.OrgID, map[string]any{"deviceId": id, "hostname": d.Hostname, "previousStatus": d.Status})
	if err != nil {
		return nil, err
	}
	tx := (&store.Tx{}).Add(
		DecommissionWrite(d.OrgID, id, now),
		AgentDecommissionWrite(id),
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: d.OrgID, Action: "device.decommission",
			ResourceType: "device", ResourceID: id, ResourceName: d.Hostname, Details: map[string]any{"previousStatus": d.Status}}),
		LiveDecommissionWrite(d.OrgID, id),
	)
	if err := s.Events.Commit(ctx, tx, ev); err != nil {
		if FailedAt(err, 0) {
			return nil, ErrDecommissioned
		}
		return nil, fmt.Errorf("decommission device %s: %w", id, err)
	}
	if s.Channel != nil {
		s.Channel.Disconnect(ctx, id)
	}
	d.Status, d.DecommissionedAt, d.UpdatedAt = StatusDecommissioned, clock.Format(now), clock.Format(now)
	d.Software = nil
	return d, nil
}

// SweepOffline marks offline every online device whose last-seen bucket
// started more than OfflineAfter ago, raising device.offline for each (the
// sweeper's device-offline job). It reads only the stale part of each
// last-seen shard (GSI5, keys only), then each stale device (its hostname for
// the event); it drains the legacy GSI2 shards the same way while rows
// written before GSI5 remain (package doc). A device with an open channel
// carries a bucket ahead of now and is never read.
func (s *Service) SweepOffline(ctx context.Context) (int, error) {
	now := s.Clock.Now()
	cutoff := now.Add(-OfflineAfter)
	n := 0
	sweep := func(stale []StaleKey) error {
		for _, k := range stale {
			d, err := s.St.Get(ctx, k.OrgID, k.ID)
			if IsNotFound(err) {
				continue
			}
			if err != nil {
				return err
			}
			ev, err := event.New(s.Clock, eventtype.DeviceOffline, d.OrgID, map[string]any{"deviceId": d.ID, "hostname": d.Hostname, "lastSeenAt": d.LastSeenAt})
			if err != nil {
				return err
			}
			holder, row := OfflineWrites(k, cutoff, now)
			tx := (&store.Tx{}).Add(holder, AgentOfflineWrite(k.ID))
			if row != nil {
				tx.Add(row)
			}
			err = s.Events.Commit(ctx, tx, ev)
			switch {
			case err == nil:
				n++
			case FailedAt(err, 0) || FailedAt(err, 1) || FailedAt(err, 2):
				// A heartbeat, a connect or decommission won the race: nothing to do.
			default:
				return fmt.Errorf("mark device %s offline: %w", k.ID, err)
			}
		}
		return nil
	}
	for shard := range SeenShards {
		stale, err := s.St.Stale(ctx, shard, cutoff)
		if err != nil {
			return n, err
		}
		if err := sweep(stale); err != nil {
			return n, err
		}
	}
	for shard := range Shards {
		stale, err := s.St.LegacyStale(ctx, shard, cutoff)
		if err != nil {
			return n, err
		}
		if err := sweep(stale); err != nil {
			return n, err
		}
	}
	return n, nil
}

// device reads device id and checks that the caller can see it: organization
// callers read their own partition; others read the agent row for the
// organization first.
func (s *Service) device(ctx context.Context, p *authz.Principal, id string) (*Device, error) {
	d, err := tenant.Find(ctx, p, id, s.St.Get, s.byID, ErrNotFound)
	if err != nil {
		return nil, err
	}
	if !visible(p, d) {
		return nil, ErrNotFound
	}
	return d, nil
}

// byID reads device id by its agent row (which names its organization).
func (s *Service) byID(ctx context.Context, id string) (*Device, error) {
	a, err := s.St.Agent(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.St.Get(ctx, a.OrgID, id)
}

func visible(p *authz.Principal, d *Device) bool {
	site := ""
	if d.SiteID != nil {
		site = *d.SiteID
	}
	return p.CanAccessDevice(authz.Org{ID: d.OrgID, PartnerID: d.PartnerID}, site, d.GroupIDs)
}

func groupRestricted(p *authz.Principal) bool {
	return p.Scope == authz.ScopeOrg && len(p.DeviceGroupIDs) > 0
}

// controls refuses control characters in a display value.
func controls(f fault.Fields, path, s string) {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			f.Add(path, "must not contain control characters")
			return
		}
	}
}

// Reachable lists every device p may see across the organizations it can
// access (site and device-group restrictions applied), with software when
// software is true: one Query per organization (two with software), plus the
// organization list for partner and system callers. The caller authorizes.
func (s *Service) Reachable(ctx context.Context, p *authz.Principal, software bool) ([]Device, error) {
	orgIDs, err := s.Orgs.Reachable(ctx, p)
	if err != nil {
		return nil, err
	}
	read := s.St.List
	if software {
		read = s.St.ListWithSoftware
	}
	return tenant.Collect(ctx, orgIDs, read, func(d *Device) bool { return visible(p, d) })
}
