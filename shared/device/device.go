// Package device owns the device inventory: the Device record every other part
// of Gale reads (the filter engine, search, PAM), the agent credential row that
// maps a device id to its organization, token hash and pending commands, the
// gzipped software chunks, and the inventory routes (/api/v1/devices).
//
// # Invariants
//
//   - Status moves by compare-and-swap: enrollment creates "online"; a heartbeat
//     on a device that is not online moves it online (device.online); the
//     device-offline sweep moves an online device whose last heartbeat is older
//     than OfflineAfter offline (device.offline); decommission is final
//     (device.decommissioned). The agent row mirrors the status in the same
//     transaction, so the agent's token check (one GetItem) knows it.
//   - A decommissioned or quarantined device's token is refused (403).
//   - Only online devices carry GSI2 keys (DEVSEEN#<shard> / <last-seen
//     minute>#<id>): the offline sweep queries the 16 shards up to its
//     cutoff and so reads only devices that went stale, never the fleet.
//   - Software inventory (up to MaxSoftware entries) is stored apart from the
//     device item, sorted and gzipped, split into chunk items of at most
//     ChunkBytes (well inside DynamoDB's 400 KB item limit); the device item keeps
//     softwareCount, softwareHash and softwareChunks. An unchanged list (same
//     hash) writes nothing.
//
// The device item is kept under 1 KB for a typical device, so a heartbeat costs
// one write unit on the table: the nested hardware, network and metrics maps are
// stored under short attribute names (hw, net, mx and their abbreviated keys;
// see the dynamodbav tags), while JSON keeps the names of the API. Read devices
// through this package's Store and types, never by raw attribute names.
//
// # Rows
//
//	entity            PK / SK                          GSI1   GSI2PK / GSI2SK                                 GSI3PK / GSI3SK, GSI4PK / GSI4SK
//	device            ORG#<oid> / DEVICE#<id>          -      DEVSEEN#<shard> / <minute>#<id> (online only)   PARTNER#<pid>#DEVICES, ORG#<oid>#DEVICES / <lower hostname>\x01<id>
//	agent credential  AGENT#<id> / AGENT               -      -
//	software chunk    ORG#<oid> / DEVSW#<id>#<nnn>     -      -
//	command result    ORG#<oid> / CMDRESULT#<id>#<cid> -      -
//
// Access patterns: the devices of an organization are a prefix query of
// ORG#<oid> (DEVICE#); a device by id alone reads its agent row (GetItem) for the
// organization, then the device; a device's software is a prefix query of
// ORG#<oid> (DEVSW#<id>#); the agent token check is one GetItem of AGENT#<id>.
// GET /devices reads one page: the keys of the page from the list indexes (GSI3
// for a partner's devices across its organizations, GSI4 for one organization's;
// both project only the keys and the reach attributes, so the caller's site and
// device-group restriction is applied before any device is read), then the
// page's devices in one BatchGetItem (tenant.List, store.Window). A system
// caller without orgId reads every partner's GSI3 partition and the GSI4
// partition of each organization without a partner side by side, merged by
// sort key (store.Merge), each only as far as the page needs. The device item carries no
// GSI1 keys, and the list indexes project nothing a heartbeat changes, so a
// heartbeat writes only the table and GSI2 (and the list indexes' sort keys on
// the rare heartbeat that reports a new hostname).
package device

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
)

// Status values of a device.
const (
	StatusOnline         = "online"
	StatusOffline        = "offline"
	StatusMaintenance    = "maintenance"
	StatusDecommissioned = "decommissioned"
	StatusQuarantined    = "quarantined"
	StatusUpdating       = "updating"
	StatusPending        = "pending"
)

// Timing of agents.
const (
	// HeartbeatInterval is what enrollment and heartbeats tell agents.
	HeartbeatInterval = 60 * time.Second
	// OfflineAfter is three missed heartbeats.
	OfflineAfter = 3 * HeartbeatInterval
	// Shards of the last-seen index.
	Shards = 16
	// MaxSoftware is the largest software list an agent may report.
	MaxSoftware = 10000
	// ChunkBytes bounds one software chunk item's payload.
	ChunkBytes = 300 * 1024
)

// Enumerations of the device fields.
var (
	OSTypes       = []string{"windows", "macos", "linux"}
	Architectures = []string{"x64", "x86", "arm64"}
	Roles         = []string{"workstation", "server", "printer", "router", "switch", "firewall", "access_point", "phone", "iot", "camera", "nas", "unknown"}
)

// Hardware facts.
type Hardware struct {
	Manufacturer *string `dynamodbav:"mfr,omitempty" json:"manufacturer"`
	Model        *string `dynamodbav:"model,omitempty" json:"model"`
	SerialNumber *string `dynamodbav:"serial,omitempty" json:"serialNumber"`
	CPUModel     *string `dynamodbav:"cpu,omitempty" json:"cpuModel"`
	CPUCores     *int    `dynamodbav:"cores,omitempty" json:"cpuCores"`
	RAMTotalMb   *int    `dynamodbav:"ramMb,omitempty" json:"ramTotalMb"`
	DiskTotalGb  *int    `dynamodbav:"diskGb,omitempty" json:"diskTotalGb"`
	GPUModel     *string `dynamodbav:"gpu,omitempty" json:"gpuModel"`
}

// Network facts.
type Network struct {
	IPAddress  *string `dynamodbav:"ip,omitempty" json:"ipAddress"`
	PublicIP   *string `dynamodbav:"pip,omitempty" json:"publicIp"`
	MACAddress *string `dynamodbav:"mac,omitempty" json:"macAddress"`
}

// Metrics of the last heartbeat.
type Metrics struct {
	CPUPercent  *float64 `dynamodbav:"cpu,omitempty" json:"cpuPercent"`
	RAMPercent  *float64 `dynamodbav:"ram,omitempty" json:"ramPercent"`
	DiskPercent *float64 `dynamodbav:"disk,omitempty" json:"diskPercent"`
}

// Software is one installed package.
type Software struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Vendor  string `json:"vendor,omitempty"`
}

// Device is the inventory record. Software is not part of the item: it is
// filled by Store.LoadWithSoftware / ListWithSoftware (and GET /devices/:id).
type Device struct {
	store.Keys
	ID            string            `dynamodbav:"id" json:"id"`
	OrgID         string            `dynamodbav:"orgId" json:"orgId"`
	PartnerID     string            `dynamodbav:"partnerId,omitempty" json:"-"`
	SiteID        *string           `dynamodbav:"siteId,omitempty" json:"siteId"`
	GroupIDs      []string          `dynamodbav:"groupIds" json:"groupIds"`
	Hostname      string            `dynamodbav:"hostname" json:"hostname"`
	DisplayName   *string           `dynamodbav:"displayName,omitempty" json:"displayName"`
	OSType        string            `dynamodbav:"osType" json:"osType"`
	OSVersion     string            `dynamodbav:"osVersion" json:"osVersion"`
	OSBuild       *string           `dynamodbav:"osBuild,omitempty" json:"osBuild"`
	Architecture  string            `dynamodbav:"architecture" json:"architecture"`
	AgentVersion  string            `dynamodbav:"agentVersion" json:"agentVersion"`
	Status        string            `dynamodbav:"status" json:"status"`
	DeviceRole    string            `dynamodbav:"deviceRole" json:"deviceRole"`
	LastUser      *string           `dynamodbav:"lastUser,omitempty" json:"lastUser"`
	IsHeadless    bool              `dynamodbav:"isHeadless" json:"isHeadless"`
	UptimeSeconds *int64            `dynamodbav:"uptimeSeconds,omitempty" json:"uptimeSeconds"`
	EnrolledAt    string            `dynamodbav:"enrolledAt" json:"enrolledAt"`
	LastSeenAt    *string           `dynamodbav:"lastSeenAt,omitempty" json:"lastSeenAt"`
	Tags          []string          `dynamodbav:"tags" json:"tags"`
	CustomFields  map[string]string `dynamodbav:"customFields" json:"customFields"`
	Hardware      Hardware          `dynamodbav:"hw" json:"hardware"`
	Network       Network           `dynamodbav:"net" json:"network"`
	Metrics       Metrics           `dynamodbav:"mx" json:"metrics"`
	Software      []Software        `dynamodbav:"-" json:"software,omitempty"`
	// HealthStatus is the agent's own last report (ok, warning, error).
	HealthStatus     string `dynamodbav:"healthStatus,omitempty" json:"healthStatus,omitempty"`
	SoftwareCount    int    `dynamodbav:"softwareCount" json:"softwareCount"`
	SoftwareHash     string `dynamodbav:"softwareHash,omitempty" json:"-"`
	SoftwareChunks   int    `dynamodbav:"softwareChunks,omitempty" json:"-"`
	DecommissionedAt string `dynamodbav:"decommissionedAt,omitempty" json:"decommissionedAt,omitempty"`
	UpdatedAt        string `dynamodbav:"updatedAt" json:"updatedAt"`
	// GroupID mirrors the single device group (the CAS anchor of group moves).
	GroupID string `dynamodbav:"groupId,omitempty" json:"-"`
}

// Agent is a device's credential row: what the token check needs in one read.
type Agent struct {
	store.Keys
	DeviceID  string  `dynamodbav:"deviceId"`
	OrgID     string  `dynamodbav:"orgId"`
	PartnerID string  `dynamodbav:"partnerId,omitempty"`
	SiteID    *string `dynamodbav:"siteId,omitempty"`
	GroupID   string  `dynamodbav:"groupId,omitempty"`
	TokenHash string  `dynamodbav:"tokenHash"`
	Status    string  `dynamodbav:"status"`
	// Commands are queued for the agent by id; the heartbeat returns them and
	// pushes them on the agent channel (shared/channel) until the agent
	// acknowledges them (ackedAt) or they expire; a command result removes
	// its entry.
	Commands map[string]Command `dynamodbav:"commands"`
}

// Command is a queued instruction for an agent. It is written once with its
// id; every delivery (heartbeat answer, channel push, re-send) carries the
// same id, so an agent applies it once whatever it receives twice.
type Command struct {
	ID        string         `dynamodbav:"id" json:"id"`
	Type      string         `dynamodbav:"type" json:"type"`
	Payload   map[string]any `dynamodbav:"payload,omitempty" json:"payload,omitempty"`
	CreatedAt string         `dynamodbav:"createdAt" json:"createdAt"`
	// ExpiresAt ends delivery: an expired command is no longer sent.
	ExpiresAt string `dynamodbav:"expiresAt,omitempty" json:"expiresAt,omitempty"`
	// AckedAt is set by the agent's ack on the channel: delivered, never re-sent.
	AckedAt string `dynamodbav:"ackedAt,omitempty" json:"-"`
}

// CommandTTL is how long a command is delivered when its sender sets no expiry.
const CommandTTL = 24 * time.Hour

// Pending lists the commands still to deliver at now (not acknowledged, not
// expired), oldest first: what a heartbeat answers and a channel re-sends.
func (a *Agent) Pending(now time.Time) []Command {
	ts := clock.Format(now)
	out := []Command{}
	for _, c := range a.Commands {
		if c.AckedAt != "" || (c.ExpiresAt != "" && c.ExpiresAt <= ts) {
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(x, y Command) int {
		if c := strings.Compare(x.CreatedAt, y.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out
}

// Keys builds the primary keys of device id of orgID.
func Keys(orgID, id string) store.Keys { return store.Keys{PK: store.OrgPK(orgID), SK: "DEVICE#" + id} }

// AgentKey is the key of device id's credential row.
func AgentKey(id string) store.KeyRef { return store.KeyRef{PK: "AGENT#" + id, SK: "AGENT"} }

// seenPK is the last-seen index partition of device id.
func seenPK(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return fmt.Sprintf("DEVSEEN#%02d", h.Sum32()%Shards)
}

// seenSK sorts a device by the minute it was last seen (the sweeper reads the
// organization from the projected item, so the key stays short).
func seenSK(id string, seen time.Time) string {
	return seen.UTC().Truncate(time.Minute).Format("2006-01-02T15:04Z") + "#" + id
}

// Seen sets the last-seen index keys of an online device.
func Seen(k *store.Keys, orgID, id string, at time.Time) {
	k.GSI2PK, k.GSI2SK = seenPK(id), seenSK(id, at)
}

// List index keys: a device is listed, by hostname (case-insensitively, then
// id), in its partner's partition of GSI3 and its organization's partition of
// GSI4. listSep sorts below every character a hostname may hold (agents refuse
// control characters), so "ab" sorts before "ab-1" as strings.Compare has it.
const listSep = "\x01"

// PartnerListPK is the GSI3 partition of the devices of partner partnerID.
func PartnerListPK(partnerID string) string { return store.PartnerPK(partnerID) + "#DEVICES" }

// OrgListPK is the GSI4 partition of the devices of organization orgID.
func OrgListPK(orgID string) string { return store.OrgPK(orgID) + "#DEVICES" }

// listSK is a device's sort key in both list indexes.
func listSK(hostname, id string) string { return strings.ToLower(hostname) + listSep + id }

// SetListKeys puts d into the list indexes (enrollment sets them; a heartbeat
// that reports a new hostname moves the sort keys).
func SetListKeys(d *Device) {
	d.SetList(PartnerListPK, OrgListPK, d.PartnerID, d.OrgID, listSK(d.Hostname, d.ID))
}

func softwarePrefix(id string) string { return "DEVSW#" + id + "#" }

// Blocked reports whether a device in status may no longer use its token.
func Blocked(status string) bool {
	return status == StatusDecommissioned || status == StatusQuarantined
}
