// Package device owns the device inventory: the Device record every other part
// of Gale reads (the filter engine, search, PAM), the agent credential row that
// maps a device id to its organization, token hash, pending commands and agent
// channel marker (the device's live connection: shared/channel), the gzipped
// software chunks, and the inventory routes (/api/v1/devices).
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
//   - Only online devices carry last-seen keys, in GSI5 (KEYS_ONLY):
//     SEEN#<shard> / <bucket start>#<id>, 64 shards by a hash of the device id
//     (no partition is shared by every tenant at the rate of heartbeats), the
//     bucket a 5-minute window staggered per device (SeenBucket, SeenSK). The
//     offline sweep queries the shards up to its cutoff and reads only devices
//     that went stale. A device with an open agent channel carries a key at
//     least ConnectedFor ahead of its last connect (agent.Service.Connect
//     moves it ConnectedAhead ahead when less is left): the sweep never sees
//     it while the channel can be open. Rows written before GSI5 carry GSI2
//     DEVSEEN#<shard> / <minute>#<id>; the sweep still drains those 16 shards
//     (LegacyStale), and every device write removes the GSI2 keys, so they
//     empty within OfflineAfter of the deployment.
//   - A heartbeat writes only what changed (see "Heartbeats" below).
//   - Software inventory (up to MaxSoftware entries) is stored apart from the
//     device item, sorted and gzipped, split into chunk items of at most
//     ChunkBytes (well inside DynamoDB's 400 KB item limit); the device item keeps
//     softwareCount, softwareHash and softwareChunks. An unchanged list (same
//     hash) writes nothing.
//
// # Heartbeats
//
// The agent row, which the token check reads anyway, keeps a digest of what
// the last written heartbeat stored (bf: health, agent version, last user,
// hostname, OS version; bm: the metrics' 10-point bands; bb: the 5-minute
// bucket of that write; bs: the last-seen key written) and the count of
// heartbeat writes in the current minute (bw, bn). PlanBeat compares a
// heartbeat with it, without a read: a heartbeat writes the live row (then
// the agent row's digest; the device row before them when a fact changed)
// only when
//
//   - a fact changed (health, agent version, last user, hostname, OS version),
//     or the status moves (offline -> online, with device.online);
//   - without a channel, its last-seen bucket moved (at most once per 5
//     minutes; the write carries the exact metrics and uptime);
//   - a metric crossed a 10-point band, at most once per 5-minute bucket
//     (what matters to alerts reaches the row within 5 minutes; metrics and
//     uptime are otherwise refreshed with the last-seen write, or, with a
//     channel open, only with another change).
//
// A steady device with a channel open writes nothing; without one it writes
// the live row and the agent row once per 5 minutes (and moves its GSI5
// key). Heartbeat writes are limited to BeatWrites a minute per device,
// counted on the agent row by the digest update; a heartbeat that writes
// nothing costs one GetItem (the token check) and is bounded by the agent
// route's API Gateway throttle (infra/cdk/README.md). The digest is a hint:
// a lost or raced digest update only makes the next heartbeat write again.
//
// Agents are told their next interval with jitter (NextInterval:
// HeartbeatInterval, or ChannelInterval when a channel is open, +-10%,
// deterministic from the device id and the minute), so beats never
// synchronise.
//
// # Live rows
//
// A device is two rows: the device row, its described record (identity,
// hardware, network, tags, custom fields, facts, status: 1-2 KB for a fully
// described device), and its live row (Live: status mirrored, last seen,
// metrics, uptime, the last-seen index keys: about 280 bytes, one write
// unit). Heartbeats and connects write the live row; the device row only
// when a fact or the status changes, and every status transition writes
// both in one transaction. Reads lay the live row over the device row: one
// Query of DEVICE#<id> for one device (the live row's SK sorts right after
// its device row's), the organization's DEVICE# Query for all of them, and
// each list page's one BatchGetItem reads both rows of each device
// (tenant.Listing.Companion). A device enrolled before live rows existed
// (its agent row has no lv) reads as stored, is swept by the key on its
// device row, and moves to a live row at its next heartbeat or transition
// (TestDevicesBeforeLiveRowsMoveToThem). The nested hardware, network and
// metrics maps are stored under short attribute names (hw, net, mx and their
// abbreviated keys; see the dynamodbav tags), while JSON keeps the names of
// the API. Read devices through this package's Store and types, never by raw
// attribute names.
//
// # Rows
//
//	entity            PK / SK                          GSI1   GSI2PK / GSI2SK                                 GSI3PK / GSI3SK, GSI4PK / GSI4SK
//	device            ORG#<oid> / DEVICE#<id>          -      (legacy DEVSEEN#, removed on write)             PARTNER#<pid>#DEVICES, ORG#<oid>#DEVICES / <lower hostname>\x01<id>
//	device live row   ORG#<oid> / DEVICE#<id>#live     -      GSI5 SEEN#<shard> / <bucket start>#<id> (online only, KEYS_ONLY; on the device row before live rows)
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
// heartbeat writes only the live row and GSI5 (and the device row and the
// list indexes' sort keys on the rare heartbeat that reports a new hostname).
package device

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/gale-rmm/gale/shared/authz"
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
	// HeartbeatInterval is what enrollment and heartbeats tell agents without
	// a channel (NextInterval adds the jitter).
	HeartbeatInterval = 60 * time.Second
	// ChannelInterval is the heartbeat interval of an agent whose channel is
	// open (its presence comes from the connection).
	ChannelInterval = 300 * time.Second
	// SeenBucket is the resolution of the last-seen index: a device moves its
	// GSI5 key at most once per bucket.
	SeenBucket = 5 * time.Minute
	// OfflineAfter: a bucket (the stored start may be up to SeenBucket older
	// than the last heartbeat) plus three jittered intervals and a margin, so
	// a device is swept 5 to 10 minutes after its last heartbeat.
	OfflineAfter = 10 * time.Minute
	// ConnectedFor is a channel connection's longest life with a margin
	// (API Gateway closes a WebSocket connection after 2 hours): the end the
	// channel marker names, and how much of its last-seen key a connected
	// device must have left when a connection opens (SeenDue).
	ConnectedFor = 2*time.Hour + 5*time.Minute
	// ConnectedAhead is how far ahead a connect moves a due last-seen key
	// (ConnectedSK). A move writes the live row and its GSI5 key (3 WCU)
	// and the agent row's copy (1 WCU),
	// once per ConnectedAhead-ConnectedFor at most, about 0.23 WCU an hour:
	// with the connect's marker (1 WCU every 2 hours) a steady connected
	// device stays under 1 WCU an hour. The price: API Gateway's $disconnect
	// is best effort, and a device whose $disconnect is lost is swept only
	// when its key comes due, at most ConnectedAhead+OfflineAfter after the
	// connect.
	ConnectedAhead = 24 * time.Hour
	// SeenShards of the last-seen index (GSI5).
	SeenShards = 64
	// Shards of the legacy last-seen index (GSI2 DEVSEEN#), drained by the sweep.
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
	Metrics       Metrics           `dynamodbav:"mx,omitempty" json:"metrics"`
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
	// SeenPK / SeenSK are the last-seen index keys (GSI5, online only).
	SeenPK string `dynamodbav:"GSI5PK,omitempty" json:"-"`
	SeenSK string `dynamodbav:"GSI5SK,omitempty" json:"-"`
}

// Owner is the device's organization (tenant.Owned).
func (d *Device) Owner() authz.Org { return authz.Org{ID: d.OrgID, PartnerID: d.PartnerID} }

// Owner is the device's organization (tenant.Owned: PAM reads a device by id
// through tenant.Find).
func (a *Agent) Owner() authz.Org { return authz.Org{ID: a.OrgID, PartnerID: a.PartnerID} }

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
	// The last written heartbeat's digest (package doc, "Heartbeats").
	BeatFacts  string `dynamodbav:"bf,omitempty"`
	BeatBands  string `dynamodbav:"bm,omitempty"`
	BeatBucket string `dynamodbav:"bb,omitempty"`
	SeenKey    string `dynamodbav:"bs,omitempty"`
	// Live: the device has its live row (Live; rows written before it did
	// not, and move to it at their next transition or heartbeat).
	Live bool `dynamodbav:"lv,omitempty"`
	// Heartbeat writes counted in minute WriteWin.
	WriteWin string `dynamodbav:"bw,omitempty"`
	Writes   int    `dynamodbav:"bn,omitempty"`
	// ChannelUntil is set while the agent's channel is open (its connect): a
	// heartbeat before it knows the channel is open without another read.
	ChannelUntil string `dynamodbav:"ch,omitempty"`
	// ChannelPrev is the marker the last connect replaced ("" for none),
	// written by that connect (ConnectMarkerWrite) so that its answer names
	// the connection to close even when it is a retry's.
	ChannelPrev string `dynamodbav:"chp,omitempty"`
}

// Connected reports whether a's channel is open at now.
func (a *Agent) Connected(now time.Time) bool {
	return a.ChannelUntil != "" && a.ChannelUntil > clock.Format(now)
}

// ChannelConn is the connection id of a's channel marker ("" for none): the
// connection pushes go to.
func (a *Agent) ChannelConn() string { return MarkerConn(a.ChannelUntil) }

// MarkerConn is the connection id a channel marker (<until>#<connection id>)
// names.
func MarkerConn(marker string) string {
	_, conn, _ := strings.Cut(marker, "#")
	return conn
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

// SeenIndex is the last-seen index (keys only).
const SeenIndex = store.GSI5

func idHash(id string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()
}

// SeenPK is the last-seen index partition of device id: one of SeenShards by
// a hash of the id, so an organization's devices spread over every shard and
// no shard belongs to one tenant or all of them.
func SeenPK(id string) string { return fmt.Sprintf("SEEN#%02d", idHash(id)%SeenShards) }

// SeenBucketStart is the start of device id's last-seen bucket at t. Buckets
// are staggered per device (an offset of up to SeenBucket by the id's hash),
// so a fleet's bucket changes spread evenly instead of at every 5-minute
// mark.
func SeenBucketStart(id string, t time.Time) time.Time {
	off := time.Duration(idHash(id)%uint32(SeenBucket/time.Second)) * time.Second
	return t.Add(-off).Truncate(SeenBucket).Add(off)
}

func seenStamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// SeenSK sorts device id by the start of its last-seen bucket at t.
func SeenSK(id string, t time.Time) string { return seenStamp(SeenBucketStart(id, t)) + "#" + id }

// ConnectedSK is the last-seen sort key a connect at t gives a device whose
// key is due (SeenDue): ConnectedAhead ahead, out of the sweep's reach while
// this connection and the next ones can be open.
func ConnectedSK(id string, t time.Time) string { return seenStamp(t.Add(ConnectedAhead)) + "#" + id }

// SeenDue reports whether last-seen key sk (the agent row's copy, SeenKey;
// "" for none) leaves less than a connection's life (ConnectedFor) after a
// connect at now: the connect then moves it (ConnectedSK), otherwise it
// leaves the device row alone.
func SeenDue(sk string, now time.Time) bool {
	stamp, _, _ := strings.Cut(sk, "#")
	return stamp < seenStamp(now.Add(ConnectedFor))
}

// Seen sets the last-seen index keys of an online device seen at at.
func Seen(d *Device, at time.Time) { d.SeenPK, d.SeenSK = SeenPK(d.ID), SeenSK(d.ID, at) }

// legacySeenPK is the GSI2 partition of the last-seen index before GSI5.
func legacySeenPK(shard int) string { return fmt.Sprintf("DEVSEEN#%02d", shard) }

// NextInterval is the heartbeat interval told to device id at now: base
// (HeartbeatInterval, or ChannelInterval with a channel open) +-10%, by a
// hash of the id and the minute, so the same device drifts and a fleet that
// started together spreads out. Deterministic: tests move the clock.
func NextInterval(id string, now time.Time, connected bool) time.Duration {
	base := HeartbeatInterval
	if connected {
		base = ChannelInterval
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	var minute [8]byte
	binary.BigEndian.PutUint64(minute[:], uint64(now.Unix()/60))
	h.Write(minute[:])
	span := int64(base / 5 / time.Second) // 20% of base, in whole seconds
	return base - base/10 + time.Duration(int64(h.Sum32())%(span+1))*time.Second
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
