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
	"io"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// Get reads device id of organization orgID (consistent read).
func (s Store) Get(ctx context.Context, orgID, id string) (*Device, error) {
	var d Device
	if err := s.St.Get(ctx, store.OrgPK(orgID), "DEVICE#"+id, &d); err != nil {
		return nil, fmt.Errorf("get device %s: %w", id, err)
	}
	return &d, nil
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

// List reads the devices of organization orgID (without software).
func (s Store) List(ctx context.Context, orgID string) ([]Device, error) {
	out := []Device{}
	if err := s.St.AllInto(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "DEVICE#"}, &out); err != nil {
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

// Stale lists the online devices of one last-seen shard whose last heartbeat is
// before cutoff (GSI2; a filter drops the cutoff minute's fresh ones).
func (s Store) Stale(ctx context.Context, shard int, cutoff time.Time) ([]Device, error) {
	out := []Device{}
	stale := expression.Name("lastSeenAt").LessThan(expression.Value(clock.Format(cutoff)))
	q := store.Query{Index: store.GSI2, PK: fmt.Sprintf("DEVSEEN#%02d", shard),
		SKTo:  cutoff.UTC().Truncate(time.Minute).Format("2006-01-02T15:04Z") + "#~",
		Where: &stale}
	if err := s.St.AllInto(ctx, q, &out); err != nil {
		return nil, fmt.Errorf("stale devices of shard %d: %w", shard, err)
	}
	return out, nil
}

// Do runs one write.
func (s Store) Do(ctx context.Context, w *store.Write) error { return s.St.Do(ctx, w) }

// Commit runs a transaction.
func (s Store) Commit(ctx context.Context, tx *store.Tx) error { return s.St.Commit(ctx, tx) }

// ---- writes ------------------------------------------------------------

// EnrollWrites create device d and its agent row with token hash tokenHash.
func EnrollWrites(d *Device, tokenHash string) []*store.Write {
	SetListKeys(d)
	k := AgentKey(d.ID)
	a := &Agent{Keys: store.Keys{PK: k.PK, SK: k.SK}, DeviceID: d.ID, OrgID: d.OrgID, PartnerID: d.PartnerID,
		SiteID: d.SiteID, TokenHash: tokenHash, Status: d.Status, Commands: map[string]Command{}}
	return []*store.Write{store.PutNew(d), store.PutNew(a)}
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

// Rate of heartbeats on one device: at most BeatLimit in any BeatWindow,
// counted in the device item's own slots by shared/ratelimit's sliding window
// (one atomic write decides; no read before it and no retry loop).
const (
	BeatLimit  = 600
	BeatWindow = time.Minute
)

// BeatWrite is the heartbeat's device update: the facts of b, the last-seen
// index keys, and the count c of this heartbeat in the device item's
// rate-limit slots. from is the status the caller saw (the update requires it,
// so a concurrent transition is never overwritten).
func BeatWrite(orgID, id, from string, b Beat, c ratelimit.Count) *store.Write {
	to := BeatStatus(from)
	at := clock.Format(b.At)
	upd := expression.Set(expression.Name("status"), expression.Value(to)).
		Set(expression.Name("lastSeenAt"), expression.Value(at)).
		Set(expression.Name("updatedAt"), expression.Value(at)).
		Set(expression.Name("healthStatus"), expression.Value(b.Health))
	if to == StatusOnline {
		var k store.Keys
		Seen(&k, orgID, id, b.At)
		upd = upd.Set(expression.Name("GSI2PK"), expression.Value(k.GSI2PK)).Set(expression.Name("GSI2SK"), expression.Value(k.GSI2SK))
	}
	opt := func(name string, val any) { upd = upd.Set(expression.Name(name), expression.Value(val)) }
	if b.AgentVersion != "" {
		opt("agentVersion", b.AgentVersion)
	}
	if b.Metrics != nil {
		opt("mx", *b.Metrics)
	}
	if b.LastUser != nil {
		opt("lastUser", *b.LastUser)
	}
	if b.UptimeSeconds != nil {
		opt("uptimeSeconds", *b.UptimeSeconds)
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
	return store.Change(store.OrgPK(orgID), "DEVICE#"+id, c.Spend(upd).Remove(expression.Name("tat"))).
		When(store.Is("status", from).And(c.Fresh())).Exists()
}

// Beat is the steady-state heartbeat: one UpdateItem sets b's facts, counts
// the heartbeat in the device item's slots and answers the item (ALL_NEW),
// whose slots decide. Past BeatLimit in the last BeatWindow the count is taken
// back (a second UpdateItem) and Beat answers 429 with retryAfter: the time
// until the oldest counted slot leaves the window. The refused heartbeat's
// facts stay written (they are the device's latest; the limit bounds the
// writes a device causes, two per refused heartbeat). A device no longer in
// status from is store.ErrConditionFailed. A retry of the write whose answer
// was lost is recognised by the count's token and counts once.
func (s Store) Beat(ctx context.Context, orgID, id, from string, b Beat) error {
	c := ratelimit.NewCount(BeatWindow, b.At)
	w := BeatWrite(orgID, id, from, b, c)
	item, err := s.St.Update(ctx, w)
	if errors.Is(err, store.ErrConditionFailed) && c.In(item) {
		err = nil // applied by an attempt whose answer was lost
	}
	if err != nil {
		return err
	}
	win := ratelimit.Tally(item, BeatWindow, b.At)
	if win.Count <= BeatLimit {
		return nil
	}
	if err := s.St.Do(ctx, c.Refund(store.OrgPK(orgID), "DEVICE#"+id)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("heartbeat of %s: refund: %w", id, err)
	}
	return fault.RateLimited("Too many requests", win.RetryAfter(b.At))
}

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

// AgentStatusWrite moves device id's agent row from status from to to.
func AgentStatusWrite(id, from, to string) *store.Write {
	k := AgentKey(id)
	return store.Change(k.PK, k.SK, expression.Set(expression.Name("status"), expression.Value(to))).
		When(store.Is("status", from)).Exists()
}

// OfflineWrite moves an online device last seen before cutoff offline and
// takes it out of the last-seen index.
func OfflineWrite(orgID, id string, cutoff, now time.Time) *store.Write {
	upd := expression.Set(expression.Name("status"), expression.Value(StatusOffline)).
		Set(expression.Name("updatedAt"), expression.Value(clock.Format(now))).
		Remove(expression.Name("GSI2PK")).Remove(expression.Name("GSI2SK"))
	cond := store.Is("status", StatusOnline).And(expression.Name("lastSeenAt").LessThan(expression.Value(clock.Format(cutoff))))
	return store.Change(store.OrgPK(orgID), "DEVICE#"+id, upd).When(cond).Exists()
}

// DecommissionWrite moves device id to decommissioned from any other status.
func DecommissionWrite(orgID, id string, now time.Time) *store.Write {
	ts := clock.Format(now)
	upd := expression.Set(expression.Name("status"), expression.Value(StatusDecommissioned)).
		Set(expression.Name("decommissionedAt"), expression.Value(ts)).
		Set(expression.Name("updatedAt"), expression.Value(ts)).
		Remove(expression.Name("GSI2PK")).Remove(expression.Name("GSI2SK"))
	return store.Change(store.OrgPK(orgID), "DEVICE#"+id, upd).
		When(expression.Name("status").NotEqual(expression.Value(StatusDecommissioned))).Exists()
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
