package device

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// Get reads device id of organization orgID with its live row (one
// consistent Query of DEVICE#<id>).
func (s Store) Get(ctx context.Context, orgID, id string) (*Device, error) {
	ds, err := s.devices(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "DEVICE#" + id})
	if err != nil {
		return nil, fmt.Errorf("get device %s: %w", id, err)
	}
	if len(ds) == 0 || ds[0].ID != id {
		return nil, errNoDevice(id)
	}
	return &ds[0], nil
}

// Agent reads device id's credential row.
func (s Store) Agent(ctx context.Context, id string) (*Agent, error) {
	var a Agent
	k := AgentKey(id)
	if err := s.St.Get(ctx, k.PK, k.SK, &a); err != nil {
		return nil, fmt.Errorf("get agent %s: %w", id, err)
	}
	return &a, nil
}

// List reads the devices of organization orgID with their live rows
// (without software).
func (s Store) List(ctx context.Context, orgID string) ([]Device, error) {
	out, err := s.devices(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "DEVICE#"})
	if err != nil {
		return nil, fmt.Errorf("devices of %s: %w", orgID, err)
	}
	return out, nil
}

// LoadWithSoftware reads device id of orgID with its software list: the filter
// engine's read of one device (GetItem, then one Query of its chunks when it
// has software).
func (s Store) LoadWithSoftware(ctx context.Context, orgID, id string) (*Device, error) {
	d, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if d.SoftwareChunks > 0 {
		if d.Software, err = s.Software(ctx, orgID, id); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// ListWithSoftware reads every device of orgID with its software: two Queries
// of the organization's partition (devices, software chunks), whatever the fleet
// size (paged by the store).
func (s Store) ListWithSoftware(ctx context.Context, orgID string) ([]Device, error) {
	devs, err := s.List(ctx, orgID)
	if err != nil {
		return nil, err
	}
	var chunks []chunk
	if err := s.St.AllInto(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "DEVSW#"}, &chunks); err != nil {
		return nil, fmt.Errorf("software of %s: %w", orgID, err)
	}
	byDevice := map[string][]chunk{}
	for _, c := range chunks {
		byDevice[c.DeviceID] = append(byDevice[c.DeviceID], c)
	}
	for i := range devs {
		d := &devs[i]
		if d.SoftwareChunks == 0 {
			continue
		}
		if d.Software, err = decodeChunks(byDevice[d.ID], d.SoftwareHash); err != nil {
			return nil, fmt.Errorf("software of device %s: %w", d.ID, err)
		}
	}
	return devs, nil
}

// Software reads device id's software list.
func (s Store) Software(ctx context.Context, orgID, id string) ([]Software, error) {
	var chunks []chunk
	if err := s.St.AllInto(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: softwarePrefix(id)}, &chunks); err != nil {
		return nil, fmt.Errorf("software of device %s: %w", id, err)
	}
	d, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	return decodeChunks(chunks, d.SoftwareHash)
}

// StaleKey is a device the last-seen index found stale: its organization,
// id and the last-seen sort key the sweep saw (the offline write requires it
// unchanged; "" for a legacy GSI2 row, whose write requires lastSeenAt older
// than the cutoff), and whether its live row holds the key (not a device row
// written before live rows existed).
type StaleKey struct {
	OrgID, ID, SeenSK string
	Live              bool
}

// Stale reads the devices of last-seen shard shard (GSI5, keys only) whose
// bucket started before cutoff.
func (s Store) Stale(ctx context.Context, shard int, cutoff time.Time) ([]StaleKey, error) {
	var rows []struct {
		PK     string `dynamodbav:"PK"`
		SK     string `dynamodbav:"SK"`
		SeenSK string `dynamodbav:"GSI5SK"`
	}
	q := store.Query{Index: SeenIndex, PK: fmt.Sprintf("SEEN#%02d", shard), SKTo: seenStamp(cutoff.Add(-time.Second)) + "#~"}
	if err := s.St.AllInto(ctx, q, &rows); err != nil {
		return nil, fmt.Errorf("stale devices of shard %d: %w", shard, err)
	}
	out := make([]StaleKey, 0, len(rows))
	for _, r := range rows {
		out = append(out, staleKey(r.PK, r.SK, r.SeenSK))
	}
	return out, nil
}

// LegacyStale reads the devices of legacy shard shard (GSI2 DEVSEEN#, rows
// written before GSI5) last seen before cutoff.
func (s Store) LegacyStale(ctx context.Context, shard int, cutoff time.Time) ([]StaleKey, error) {
	var rows []Device
	stale := expression.Name("lastSeenAt").LessThan(expression.Value(clock.Format(cutoff)))
	q := store.Query{Index: store.GSI2, PK: legacySeenPK(shard),
		SKTo:  cutoff.UTC().Truncate(time.Minute).Format("2006-01-02T15:04Z") + "#~",
		Where: &stale}
	if err := s.St.AllInto(ctx, q, &rows); err != nil {
		return nil, fmt.Errorf("stale devices of legacy shard %d: %w", shard, err)
	}
	out := make([]StaleKey, 0, len(rows))
	for _, d := range rows {
		out = append(out, StaleKey{OrgID: d.OrgID, ID: d.ID})
	}
	return out, nil
}

// Do runs one write.
func (s Store) Do(ctx context.Context, w *store.Write) error { return s.St.Do(ctx, w) }

// Commit runs a transaction.
func (s Store) Commit(ctx context.Context, tx *store.Tx) error { return s.St.Commit(ctx, tx) }

// ---- writes ------------------------------------------------------------

// EnrollWrites create device d (its described record and its live row) and
// its agent row with token hash tokenHash.
func EnrollWrites(d *Device, tokenHash string) []*store.Write {
	SetListKeys(d)
	row := *d
	live := Split(&row)
	k := AgentKey(d.ID)
	a := &Agent{Keys: store.Keys{PK: k.PK, SK: k.SK}, DeviceID: d.ID, OrgID: d.OrgID, PartnerID: d.PartnerID,
		SiteID: d.SiteID, TokenHash: tokenHash, Status: d.Status, Commands: map[string]Command{}, SeenKey: d.SeenSK, Live: true}
	return []*store.Write{store.PutNew(&row), store.PutNew(a), store.PutNew(live)}
}

// Beat is what a heartbeat sets on the device item.
type Beat struct {
	At            time.Time
	Health        string
	AgentVersion  string
	Metrics       *Metrics
	LastUser      *string
	UptimeSeconds *int64
	Hostname      *string
	OSVersion     *string
}

// BeatWrites is the most heartbeat writes of one device in a minute (package
// doc, "Heartbeats"): a heartbeat that would write beyond it is refused (429).
// Beats that write nothing are not counted.
const BeatWrites = 20

// BeatPlan is what a heartbeat writes: nothing unless Write; then the device
// row (with the last-seen key Seen unless it is "") and the agent row's
// digest Facts, Bands, Bucket.
type BeatPlan struct {
	Write                bool
	Facts, Bands, Bucket string
	Seen                 string
	window               string
}

// PlanBeat compares heartbeat b of the device of agent row a (status to after
// the beat; connected: its channel is open) with the digest of the last
// written one, without a read (package doc, "Heartbeats").
func PlanBeat(a *Agent, b Beat, to string, connected bool) BeatPlan {
	p := BeatPlan{Facts: factsDigest(b), Bands: metricBands(b.Metrics), Bucket: seenStamp(SeenBucketStart(a.DeviceID, b.At)),
		window: b.At.UTC().Format("2006-01-02T15:04Z")}
	switch {
	case to == StatusOnline && !connected:
		p.Seen = p.Bucket + "#" + a.DeviceID // SeenSK
	case to == StatusOnline && (to != a.Status || !a.Live):
		// A connected device entering the index, or moving its key to its
		// live row, takes the key a connect would give it.
		p.Seen = ConnectedSK(a.DeviceID, b.At)
	}
	p.Write = to != a.Status || !a.Live || p.Facts != a.BeatFacts || p.Seen != "" && p.Seen != a.SeenKey ||
		p.Bands != a.BeatBands && p.Bucket != a.BeatBucket
	return p
}

// Full reports whether a's heartbeat writes of the current minute are used up.
func (p BeatPlan) Full(a *Agent) bool { return a.WriteWin == p.window && a.Writes >= BeatWrites }

// BeatsRetryAfter is the seconds from now until the minute whose heartbeat
// writes are used up ends.
func BeatsRetryAfter(now time.Time) int {
	return int(now.Truncate(time.Minute).Add(time.Minute).Sub(now)/time.Second) + 1
}

// factsDigest is a short hash of the facts a heartbeat reports (an absent
// optional fact is not written, so it hashes apart from every value). A
// hint, not a secret: FNV-1a is enough.
func factsDigest(b Beat) string {
	h := fnv.New64a()
	opt := func(v *string) {
		if v == nil {
			h.Write([]byte{0})
			return
		}
		h.Write([]byte{1})
		h.Write([]byte(*v))
		h.Write([]byte{0})
	}
	opt(&b.Health)
	opt(&b.AgentVersion)
	opt(b.LastUser)
	opt(b.Hostname)
	opt(b.OSVersion)
	return strconv.FormatUint(h.Sum64(), 16)
}

// metricBands renders each metric's 10-point band (cpu, ram, disk; "-" when
// absent): a move across a band is worth a write, jitter within one is not.
func metricBands(m *Metrics) string {
	if m == nil {
		return ""
	}
	band := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return strconv.Itoa(int(*v / 10))
	}
	return band(m.CPUPercent) + "." + band(m.RAMPercent) + "." + band(m.DiskPercent)
}

// BeatWrite is the heartbeat's update of the device row (the described
// record): the status and the facts of b. from is the status the caller saw
// (the update requires it, so a concurrent transition is never
// overwritten). The legacy GSI2 keys, the last-seen keys of a row written
// before live rows existed (its live row holds them now) and rate-limit
// attributes are removed (free when absent).
func BeatWrite(orgID, id, from string, b Beat) *store.Write {
	to := BeatStatus(from)
	upd := expression.Set(expression.Name("status"), expression.Value(to)).
		Set(expression.Name("updatedAt"), expression.Value(clock.Format(b.At))).
		Set(expression.Name("healthStatus"), expression.Value(b.Health))
	opt := func(name string, val any) { upd = upd.Set(expression.Name(name), expression.Value(val)) }
	if b.AgentVersion != "" {
		opt("agentVersion", b.AgentVersion)
	}
	if b.LastUser != nil {
		opt("lastUser", *b.LastUser)
	}
	if b.Hostname != nil {
		// The list indexes sort by hostname. DynamoDB writes an index only when
		// an indexed or projected value changes, so an unchanged hostname costs
		// nothing; a device that predates the list indexes (no GSI4PK) stays out
		// of them until it is backfilled.
		sk := listSK(*b.Hostname, id)
		opt("hostname", *b.Hostname)
		opt("GSI4SK", sk)
		opt("GSI3SK", sk)
	}
	if b.OSVersion != nil {
		opt("osVersion", *b.OSVersion)
	}
	upd = upd.Remove(expression.Name("GSI2PK")).Remove(expression.Name("GSI2SK")).Remove(expression.Name("tat")).
		Remove(expression.Name("GSI5PK")).Remove(expression.Name("GSI5SK"))
	return store.Change(store.OrgPK(orgID), "DEVICE#"+id, upd).When(store.Is("status", from)).Exists()
}

// TransitionWrites move the device of agent row a to status to with
// heartbeat b as planned by p, in one transaction: the device row (0), the
// agent row's status and digest (1), the live row (2). A device written
// before live rows existed moves its last-seen key to its live row the same
// way, to its own status.
func TransitionWrites(a *Agent, b Beat, to string, p BeatPlan) []*store.Write {
	return []*store.Write{BeatWrite(a.OrgID, a.DeviceID, a.Status, b), TransitionDigestWrite(a, to, p),
		liveMove(a.OrgID, a.DeviceID, liveBeat(a.DeviceID, to, b, p.Seen))}
}

// digest sets p's digest on the agent row update upd.
func (p BeatPlan) digest(upd expression.UpdateBuilder) expression.UpdateBuilder {
	upd = upd.Set(expression.Name("bf"), expression.Value(p.Facts)).
		Set(expression.Name("bm"), expression.Value(p.Bands)).
		Set(expression.Name("bb"), expression.Value(p.Bucket))
	if p.Seen != "" {
		upd = upd.Set(expression.Name("bs"), expression.Value(p.Seen))
	}
	return upd
}

// DigestWrite records plan p on device id's agent row a and counts the write
// in the current minute: it fails (store.ErrConditionFailed) when the minute's
// BeatWrites are used up by heartbeats the caller did not see.
func DigestWrite(a *Agent, p BeatPlan) *store.Write {
	k := AgentKey(a.DeviceID)
	if a.WriteWin == p.window {
		upd := p.digest(expression.Add(expression.Name("bn"), expression.Value(1)))
		return store.Change(k.PK, k.SK, upd).
			When(store.Is("bw", p.window).And(expression.Name("bn").LessThan(expression.Value(BeatWrites)))).Exists()
	}
	upd := p.digest(expression.Set(expression.Name("bw"), expression.Value(p.window)).Set(expression.Name("bn"), expression.Value(1)))
	return store.Change(k.PK, k.SK, upd).When(expression.Name("bw").AttributeNotExists().Or(expression.Name("bw").NotEqual(expression.Value(p.window)))).Exists()
}

// TransitionDigestWrite moves device id's agent row a from its status to to
// and records plan p (a transition is once per offline period: counted, not
// limited).
func TransitionDigestWrite(a *Agent, to string, p BeatPlan) *store.Write {
	k := AgentKey(a.DeviceID)
	upd := p.digest(expression.Set(expression.Name("status"), expression.Value(to)).Set(expression.Name("lv"), expression.Value(true)))
	return store.Change(k.PK, k.SK, upd).When(store.Is("status", a.Status)).Exists()
}

// Beat writes heartbeat b of the device of agent row a as planned by p
// (status unchanged): the device row when a fact changed, the live row, then
// the digest with the minute's count. The rows are written first, so the
// digest never claims what they do not hold; a digest update lost to a
// concurrent one only costs the next heartbeat a write. ErrBeatsFull when
// the count refuses it (the rows are written; at most the concurrent
// heartbeats of one device pass the read-time check, Full),
// store.ErrConditionFailed when the device is no longer in a's status.
func (s Store) Beat(ctx context.Context, a *Agent, b Beat, p BeatPlan) error {
	if p.Facts != a.BeatFacts {
		if err := s.St.Do(ctx, BeatWrite(a.OrgID, a.DeviceID, a.Status, b)); err != nil {
			return err
		}
	}
	if err := s.St.Do(ctx, LiveBeatWrite(a.OrgID, a.DeviceID, a.Status, b, p.Seen)); err != nil {
		return err
	}
	item, err := s.St.Update(ctx, DigestWrite(a, p))
	if errors.Is(err, store.ErrConditionFailed) {
		var now Agent
		if item != nil && store.Unmarshal(item, &now) == nil && now.WriteWin == p.window && now.Writes >= BeatWrites {
			return ErrBeatsFull
		}
		return nil // another heartbeat's digest won: the next one may write again
	}
	return err
}

// ErrBeatsFull: the device's heartbeat writes of this minute are used up.
var ErrBeatsFull = errors.New("device: heartbeat writes of this minute used up")

// BeatStatus is the status a heartbeat moves a device in status from to: online
// from online, offline or pending; maintenance and updating are kept (people
// set them), the blocked states never get here.
func BeatStatus(from string) string {
	switch from {
	case StatusOnline, StatusOffline, StatusPending:
		return StatusOnline
	}
	return from
}

// OfflineWrites move an online device found stale (k) offline and take it
// out of the last-seen indexes: the row that holds its key (0; its live row,
// or a device row written before live rows existed), then with a live row
// the device row (2, after the caller's agent row write at 1). The first
// requires the last-seen key the sweep saw (a heartbeat or a connect since
// moved it), or for a legacy GSI2 row a last heartbeat before cutoff.
func OfflineWrites(k StaleKey, cutoff, now time.Time) (holder, row *store.Write) {
	cond := store.Is("status", StatusOnline).And(expression.Name("lastSeenAt").LessThan(expression.Value(clock.Format(cutoff))))
	if k.SeenSK != "" {
		cond = store.Is("status", StatusOnline).And(store.Is("GSI5SK", k.SeenSK))
	}
	if !k.Live {
		return store.Change(store.OrgPK(k.OrgID), "DEVICE#"+k.ID, offline(now)).When(cond).Exists(), nil
	}
	lk := LiveKey(k.OrgID, k.ID)
	return store.Change(lk.PK, lk.SK, liveStatus(StatusOffline)).When(cond).Exists(),
		store.Change(store.OrgPK(k.OrgID), "DEVICE#"+k.ID, offline(now)).When(store.Is("status", StatusOnline)).Exists()
}

// offline is the device update of a move to offline.
func offline(now time.Time) expression.UpdateBuilder {
	return expression.Set(expression.Name("status"), expression.Value(StatusOffline)).
		Set(expression.Name("updatedAt"), expression.Value(clock.Format(now))).
		Remove(expression.Name("GSI2PK")).Remove(expression.Name("GSI2SK")).
		Remove(expression.Name("GSI5PK")).Remove(expression.Name("GSI5SK"))
}

// AgentOfflineWrite moves device id's agent row from online to offline and
// forgets the last-seen key and the channel (the next heartbeat is a
// transition and writes them again).
func AgentOfflineWrite(id string) *store.Write {
	k := AgentKey(id)
	return store.Change(k.PK, k.SK, expression.Set(expression.Name("status"), expression.Value(StatusOffline)).
		Remove(expression.Name("bs")).Remove(expression.Name("ch"))).When(store.Is("status", StatusOnline)).Exists()
}

// DecommissionWrite moves device id to decommissioned from any other status.
func DecommissionWrite(orgID, id string, now time.Time) *store.Write {
	ts := clock.Format(now)
	upd := expression.Set(expression.Name("status"), expression.Value(StatusDecommissioned)).
		Set(expression.Name("decommissionedAt"), expression.Value(ts)).
		Set(expression.Name("updatedAt"), expression.Value(ts)).
		Remove(expression.Name("GSI2PK")).Remove(expression.Name("GSI2SK")).
		Remove(expression.Name("GSI5PK")).Remove(expression.Name("GSI5SK"))
	return store.Change(store.OrgPK(orgID), "DEVICE#"+id, upd).
		When(expression.Name("status").NotEqual(expression.Value(StatusDecommissioned))).Exists()
}

// LiveDecommissionWrite mirrors a decommission on device id's live row (in
// DecommissionWrite's transaction, which guards it).
func LiveDecommissionWrite(orgID, id string) *store.Write {
	return liveMove(orgID, id, liveStatus(StatusDecommissioned))
}

// AgentDecommissionWrite blocks device id's token.
func AgentDecommissionWrite(id string) *store.Write {
	k := AgentKey(id)
	return store.Change(k.PK, k.SK, expression.Set(expression.Name("status"), expression.Value(StatusDecommissioned))).Exists()
}

// Patch is what PATCH /devices/:id may change; nil fields are kept.
type Patch struct {
	DisplayName  *string
	ClearName    bool
	Tags         *[]string
	CustomFields *map[string]string
	// Group: SetGroup true moves the device to Group ("" = no group).
	SetGroup bool
	Group    string
	OldGroup string
}

// PatchWrite applies p to device id; a group move requires the group to be
// unchanged since it was read.
func PatchWrite(orgID, id string, p Patch, now time.Time) *store.Write {
	upd := expression.Set(expression.Name("updatedAt"), expression.Value(clock.Format(now)))
	if p.ClearName {
		upd = upd.Set(expression.Name("displayName"), expression.Value(nil))
	} else if p.DisplayName != nil {
		upd = upd.Set(expression.Name("displayName"), expression.Value(*p.DisplayName))
	}
	if p.Tags != nil {
		upd = upd.Set(expression.Name("tags"), expression.Value(*p.Tags))
	}
	if p.CustomFields != nil {
		upd = upd.Set(expression.Name("customFields"), expression.Value(*p.CustomFields))
	}
	w := func() *store.Write { return store.Change(store.OrgPK(orgID), "DEVICE#"+id, upd) }
	if !p.SetGroup {
		return w().Exists()
	}
	if p.Group == "" {
		upd = upd.Set(expression.Name("groupIds"), expression.Value([]string{})).Remove(expression.Name("groupId"))
	} else {
		upd = upd.Set(expression.Name("groupIds"), expression.Value([]string{p.Group})).Set(expression.Name("groupId"), expression.Value(p.Group))
	}
	cond := expression.Name("groupId").AttributeNotExists()
	if p.OldGroup != "" {
		cond = store.Is("groupId", p.OldGroup)
	}
	return w().When(cond).Exists()
}

// AgentGroupWrite mirrors a group move on the agent row.
func AgentGroupWrite(id, group string) *store.Write {
	k := AgentKey(id)
	if group == "" {
		return store.Change(k.PK, k.SK, expression.Remove(expression.Name("groupId"))).Exists()
	}
	return store.Change(k.PK, k.SK, expression.Set(expression.Name("groupId"), expression.Value(group))).Exists()
}

// HardwareWrite replaces device id's hardware facts.
func HardwareWrite(orgID, id string, h Hardware, now time.Time) *store.Write {
	return store.Change(store.OrgPK(orgID), "DEVICE#"+id, expression.Set(expression.Name("hw"), expression.Value(h)).
		Set(expression.Name("updatedAt"), expression.Value(clock.Format(now)))).Exists()
}

// HardwareChange replaces device id's hardware facts only when they differ
// from h (an unchanged upload fails the condition and writes nothing).
func HardwareChange(orgID, id string, h Hardware, now time.Time) *store.Write {
	return HardwareWrite(orgID, id, h, now).When(expression.Name("hw").AttributeNotExists().Or(expression.Name("hw").NotEqual(expression.Value(h))))
}

// NetworkChange replaces device id's network facts only when they differ
// from n.
func NetworkChange(orgID, id string, n Network, now time.Time) *store.Write {
	return NetworkWrite(orgID, id, n, now).When(expression.Name("net").AttributeNotExists().Or(expression.Name("net").NotEqual(expression.Value(n))))
}

// NetworkWrite replaces device id's network facts.
func NetworkWrite(orgID, id string, n Network, now time.Time) *store.Write {
	return store.Change(store.OrgPK(orgID), "DEVICE#"+id, expression.Set(expression.Name("net"), expression.Value(n)).
		Set(expression.Name("updatedAt"), expression.Value(clock.Format(now)))).Exists()
}

// EnqueueCommand queues cmd for device id (for the features that send commands).
func EnqueueCommand(id string, cmd Command) *store.Write {
	k := AgentKey(id)
	return store.Change(k.PK, k.SK, expression.Set(expression.Name("commands."+cmd.ID), expression.Value(cmd))).
		When(expression.Name("commands").AttributeExists()).Exists()
}

// AckWrite marks command commandID of device id delivered (the agent's ack
// on the channel): it is no longer re-sent, and its result may still be
// reported. Only an entry still queued: an unknown or already removed id fails
// the condition, which the caller treats as done (acks are idempotent).
func AckWrite(id, commandID string, now time.Time) *store.Write {
	k := AgentKey(id)
	entry := "commands." + commandID
	return store.Change(k.PK, k.SK, expression.Set(expression.Name(entry+".ackedAt"), expression.Value(clock.Format(now)))).
		When(expression.Name(entry).AttributeExists())
}

// CommandResult is an agent's report of a command.
type CommandResult struct {
	store.Keys
	DeviceID   string  `dynamodbav:"deviceId" json:"deviceId"`
	CommandID  string  `dynamodbav:"commandId" json:"commandId"`
	Type       string  `dynamodbav:"type" json:"type"`
	Status     string  `dynamodbav:"status" json:"status"`
	Output     *string `dynamodbav:"output" json:"output"`
	ReportedAt string  `dynamodbav:"reportedAt" json:"reportedAt"`
}

// ResultWrites record r and take its command off device id's queue (only if it
// is still queued: a result is accepted once).
func ResultWrites(orgID string, r *CommandResult) []*store.Write {
	r.Keys = store.Keys{PK: store.OrgPK(orgID), SK: "CMDRESULT#" + r.DeviceID + "#" + r.CommandID}
	k := AgentKey(r.DeviceID)
	return []*store.Write{
		store.Change(k.PK, k.SK, expression.Remove(expression.Name("commands."+r.CommandID))).
			When(expression.Name("commands." + r.CommandID).AttributeExists()),
		store.PutNew(r),
	}
}

// ---- software chunks ---------------------------------------------------

type chunk struct {
	store.Keys
	DeviceID string `dynamodbav:"deviceId"`
	N        int    `dynamodbav:"n"`
	Hash     string `dynamodbav:"hash"`
	Data     []byte `dynamodbav:"data"`
}

// EncodeSoftware sorts list (by name, version, vendor), gzips its JSON and
// returns the chunks' payloads and the list's hash.
func EncodeSoftware(list []Software) ([][]byte, string, error) {
	sorted := slices.Clone(list)
	slices.SortFunc(sorted, func(a, b Software) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := strings.Compare(a.Version, b.Version); c != 0 {
			return c
		}
		return strings.Compare(a.Vendor, b.Vendor)
	})
	raw, err := json.Marshal(sorted)
	if err != nil {
		return nil, "", fmt.Errorf("encode software: %w", err)
	}
	sum := sha256.Sum256(raw)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(raw); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	data := buf.Bytes()
	var parts [][]byte
	for len(data) > 0 {
		n := min(ChunkBytes, len(data))
		parts = append(parts, data[:n])
		data = data[n:]
	}
	return parts, hex.EncodeToString(sum[:16]), nil
}

func decodeChunks(chunks []chunk, hash string) ([]Software, error) {
	slices.SortFunc(chunks, func(a, b chunk) int { return a.N - b.N })
	var buf bytes.Buffer
	for _, c := range chunks {
		if c.Hash != hash {
			continue // a stale chunk of an earlier list (never expected after a commit)
		}
		buf.Write(c.Data)
	}
	if buf.Len() == 0 {
		return []Software{}, nil
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		return nil, fmt.Errorf("software chunks: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("software chunks: %w", err)
	}
	var out []Software
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("software chunks: %w", err)
	}
	return out, nil
}

// SoftwareWrites replace device id's software with parts (hash, count entries):
// the new chunks, deletes of chunks beyond the new count, and the device update,
// which requires the hash it had when read (oldHash) so concurrent uploads
// cannot interleave chunks.
func SoftwareWrites(orgID, id string, parts [][]byte, hash string, count, oldChunks int, oldHash string, now time.Time) []*store.Write {
	var ws []*store.Write
	for i, p := range parts {
		ws = append(ws, store.Put(&chunk{Keys: store.Keys{PK: store.OrgPK(orgID), SK: fmt.Sprintf("%s%03d", softwarePrefix(id), i)},
			DeviceID: id, N: i, Hash: hash, Data: p}))
	}
	for i := len(parts); i < oldChunks; i++ {
		ws = append(ws, store.Delete(store.OrgPK(orgID), fmt.Sprintf("%s%03d", softwarePrefix(id), i)))
	}
	upd := expression.Set(expression.Name("softwareHash"), expression.Value(hash)).
		Set(expression.Name("softwareChunks"), expression.Value(len(parts))).
		Set(expression.Name("softwareCount"), expression.Value(count)).
		Set(expression.Name("updatedAt"), expression.Value(clock.Format(now)))
	cond := expression.Name("softwareHash").AttributeNotExists()
	if oldHash != "" {
		cond = store.Is("softwareHash", oldHash)
	}
	return append(ws, store.Change(store.OrgPK(orgID), "DEVICE#"+id, upd).When(cond).Exists())
}

// IsNotFound reports a missing row.
func IsNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// FailedAt reports whether write i of a cancelled transaction failed its condition.
func FailedAt(err error, i int) bool {
	var te *store.TxError
	if !errors.As(err, &te) {
		return false
	}
	return te.FailedAt(i) || te.FailedAt(-1)
}

// ---- presence (the agent channel) ------------------------------------------

// ConnectMarkerWrite is every connect's one write while the device's status
// does not move: the agent row of device id takes channel marker marker
// (ChannelUntil) and keeps the one it replaces in chp (ChannelPrev; every
// operand of a SET reads the item as it was). No condition on the old
// marker: the newest connect wins and learns whom it replaced. A blocked
// device (decommissioned, quarantined) takes no marker (condition).
func ConnectMarkerWrite(id, marker string) *store.Write {
	k := AgentKey(id)
	upd := expression.Set(expression.Name("chp"), expression.IfNotExists(expression.Name("ch"), expression.Value(""))).
		Set(expression.Name("ch"), expression.Value(marker))
	// Markers only grow (their end, then the connection id): a connect
	// retried after its lost answer, once another connect has written,
	// must not take the marker back from the newer connection.
	newer := expression.Name("ch").AttributeNotExists().Or(expression.Name("ch").LessThan(expression.Value(marker)))
	return store.Change(k.PK, k.SK, upd).
		When(expression.Name("status").NotEqual(expression.Value(StatusDecommissioned)).
			And(expression.Name("status").NotEqual(expression.Value(StatusQuarantined))).And(newer)).Exists()
}

// ConnectedSeenWrite moves the last-seen key of the online device of agent
// row a to sk (ConnectedSK) when a connect finds it due (SeenDue), on its
// live row (or the device row of a device written before live rows
// existed); a device no longer online keeps its keys (condition).
func ConnectedSeenWrite(a *Agent, sk string) *store.Write {
	upd := expression.Set(expression.Name("GSI5PK"), expression.Value(SeenPK(a.DeviceID))).Set(expression.Name("GSI5SK"), expression.Value(sk))
	k := store.KeyRef{PK: store.OrgPK(a.OrgID), SK: "DEVICE#" + a.DeviceID}
	if a.Live {
		k = LiveKey(a.OrgID, a.DeviceID)
	}
	return store.Change(k.PK, k.SK, upd).When(store.Is("status", StatusOnline)).Exists()
}

// SeenKeyWrite records on device id's agent row the last-seen key sk that
// ConnectedSeenWrite wrote, while the device is online (a hint: a lost one
// makes the next connect move the key again).
func SeenKeyWrite(id, sk string) *store.Write {
	k := AgentKey(id)
	return store.Change(k.PK, k.SK, expression.Set(expression.Name("bs"), expression.Value(sk))).
		When(store.Is("status", StatusOnline)).Exists()
}

// ConnectWrites mark the device of agent row a connected at now: status to
// (BeatStatus of a's), the last-seen key ConnectedAhead ahead (out of the
// sweep's reach while the connection can live), and on the agent row the
// status and that key, requiring the channel marker until that the connect
// wrote (ConnectMarkerWrite: a newer connect's marker wins). Both require
// a's status.
func ConnectWrites(a *Agent, to string, now time.Time, until string) []*store.Write {
	upd := expression.Set(expression.Name("status"), expression.Value(to)).
		Set(expression.Name("updatedAt"), expression.Value(clock.Format(now))).
		Remove(expression.Name("GSI2PK")).Remove(expression.Name("GSI2SK")).
		Remove(expression.Name("GSI5PK")).Remove(expression.Name("GSI5SK"))
	sk := ConnectedSK(a.DeviceID, now)
	k := AgentKey(a.DeviceID)
	return []*store.Write{
		store.Change(store.OrgPK(a.OrgID), "DEVICE#"+a.DeviceID, upd).When(store.Is("status", a.Status)).Exists(),
		store.Change(k.PK, k.SK, expression.Set(expression.Name("status"), expression.Value(to)).
			Set(expression.Name("bs"), expression.Value(sk)).Set(expression.Name("lv"), expression.Value(true))).
			When(store.Is("status", a.Status).And(store.Is("ch", until))).Exists(),
		liveMove(a.OrgID, a.DeviceID, liveConnect(a.DeviceID, to, sk, now)),
	}
}

// DisconnectWrites mark the device of agent row a offline when its channel
// whose marker is until closes: the device leaves the last-seen index, the
// agent row forgets the marker. They require the marker unchanged (a later
// connection's $connect has replaced it: this $disconnect is stale) and the
// device online.
func DisconnectWrites(a *Agent, until string, now time.Time) []*store.Write {
	k := AgentKey(a.DeviceID)
	return []*store.Write{
		store.Change(store.OrgPK(a.OrgID), "DEVICE#"+a.DeviceID, offline(now)).When(store.Is("status", StatusOnline)).Exists(),
		store.Change(k.PK, k.SK, expression.Set(expression.Name("status"), expression.Value(StatusOffline)).
			Remove(expression.Name("bs")).Remove(expression.Name("ch")).Set(expression.Name("lv"), expression.Value(true))).
			When(store.Is("status", StatusOnline).And(store.Is("ch", until))).Exists(),
		liveMove(a.OrgID, a.DeviceID, liveStatus(StatusOffline)),
	}
}

// ForgetChannelWrite clears the channel marker until of a device that is not
// online (maintenance, updating): its status is people's to set.
func ForgetChannelWrite(id, until string) *store.Write {
	k := AgentKey(id)
	return store.Change(k.PK, k.SK, expression.Remove(expression.Name("ch"))).When(store.Is("ch", until)).Exists()
}
