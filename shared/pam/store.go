package pam

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// NewRequestID returns a UUID version 7 whose time part is at (the injected
// clock's now), so requests sort by requestedAt.
func NewRequestID(at time.Time) string {
	var b [16]byte
	ms := uint64(at.UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	if _, err := rand.Read(b[6:]); err != nil {
		return uuid.NewString()
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return uuid.UUID(b).String()
}

// idBound is the smallest (or, with high, the largest) request id of the
// millisecond of t, as a sort key.
func idBound(t time.Time, high bool) string {
	ms := uint64(t.UnixMilli())
	var b [6]byte
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	h := hex.EncodeToString(b[:])
	s := h[:8] + "-" + h[8:12] + "-"
	if high {
		return "ELEV#" + s + "~"
	}
	return "ELEV#" + s
}

// ---- elevation requests ---------------------------------------------------

// requests is the repository of elevation requests (store.OrgRows: ELEV#<id>,
// found by id through ELEVREF#<id>).
func (s Store) requests() store.OrgRows[Request] {
	return store.OrgRows[Request]{St: s.St, Kind: "ELEV"}
}

// Request reads request id of orgID.
func (s Store) Request(ctx context.Context, orgID, id string) (*Request, error) {
	return s.requests().Get(ctx, orgID, id)
}

// RequestByID finds request id of whatever organization (GSI1).
func (s Store) RequestByID(ctx context.Context, id string) (*Request, error) {
	return s.requests().ByID(ctx, id)
}

// Recent reads up to max requests of orgID requested since from, newest
// first, and reports whether more remained. The window's start is in the key
// condition (SK BETWEEN), so nothing older is read.
func (s Store) Recent(ctx context.Context, orgID string, from time.Time, max int) ([]Request, bool, error) {
	q := store.Query{PK: store.OrgPK(orgID), SKFrom: idBound(from, false), SKTo: "ELEV$", Descending: true}
	out := []Request{}
	cursor := ""
	for {
		page, err := s.St.Page(ctx, q, cursor)
		if err != nil {
			return nil, false, fmt.Errorf("recent elevation requests of %s: %w", orgID, err)
		}
		for _, it := range page.Items {
			if len(out) == max {
				return out, true, nil
			}
			var r Request
			if err := store.Unmarshal(it, &r); err != nil {
				return nil, false, err
			}
			out = append(out, r)
		}
		if page.Next == "" {
			return out, false, nil
		}
		if len(out) == max {
			return out, true, nil
		}
		cursor = page.Next
	}
}

// DueApproved lists approved, auto_approved and actuating requests of one
// shard whose expiresAt is at or before now (GSI2).
func (s Store) DueApproved(ctx context.Context, n int, now time.Time) ([]Request, error) {
	out := []Request{}
	q := store.Query{Index: store.GSI2, PK: fmt.Sprintf("ELEVEXP#%02d", n), SKFrom: "0", SKTo: clock.Format(now) + "#~"}
	if err := s.St.AllInto(ctx, q, &out); err != nil {
		return nil, fmt.Errorf("due elevations of shard %d: %w", n, err)
	}
	return out, nil
}

// StalePending lists pending requests of one shard requested at or before
// cutoff (GSI2).
func (s Store) StalePending(ctx context.Context, n int, cutoff time.Time) ([]Request, error) {
	out := []Request{}
	q := store.Query{Index: store.GSI2, PK: fmt.Sprintf("ELEVPEND#%02d", n), SKFrom: "0", SKTo: clock.Format(cutoff) + "#~"}
	if err := s.St.AllInto(ctx, q, &out); err != nil {
		return nil, fmt.Errorf("stale pending elevations of shard %d: %w", n, err)
	}
	return out, nil
}

// listFields reads requestedAt and the flow type of a request decoded from an
// index row, from its list sort key.
func listFields(r *Request) (at, flow string) {
	sk := r.GSI4SK
	if sk == "" {
		sk = r.GSI3SK
	}
	at, rest, _ := strings.Cut(sk, "#")
	if i := strings.LastIndexByte(rest, '#'); i >= 0 {
		flow = rest[i+1:]
	}
	return at, flow
}

// listMove moves r to the list partitions of status to (every status move
// sets all four keys, unchanged between live statuses: a row written before
// the lists had an index gets them whole, and the backfill then leaves it).
func listMove(upd expression.UpdateBuilder, r *Request, to string) expression.UpdateBuilder {
	k := listKeys(r, to)
	upd = upd.Set(expression.Name("GSI4PK"), expression.Value(k.GSI4PK)).Set(expression.Name("GSI4SK"), expression.Value(k.GSI4SK))
	if k.GSI3PK != "" {
		upd = upd.Set(expression.Name("GSI3PK"), expression.Value(k.GSI3PK)).Set(expression.Name("GSI3SK"), expression.Value(k.GSI3SK))
	}
	return upd
}

// retain sets r's ttl when it reaches a final status (denied, expired,
// revoked) at ttl (epoch seconds; 0 sets none).
func retain(upd expression.UpdateBuilder, ttl int64) expression.UpdateBuilder {
	if ttl == 0 {
		return upd
	}
	return upd.Set(expression.Name("ttl"), expression.Value(ttl))
}

// Reindex is the list-index backfill of the elevation requests written before
// their lists had an index (shared/backfill): their keys follow their status,
// so the backfill writes only while the status is the one it read.
func Reindex() store.Reindex {
	return store.Reindex{Kind: "elevation request", SKPrefix: "ELEV#", From: []string{"status"},
		Keys: func(it store.Item) (store.Keys, error) {
			var r Request
			if err := store.Unmarshal(it, &r); err != nil {
				return store.Keys{}, err
			}
			if r.ID == "" || r.OrgID == "" || r.Status == "" {
				return store.Keys{}, nil
			}
			return listKeys(&r, r.Status), nil
		}}
}

// decisionWrite moves pending request r to approved (expiring at expiresAt)
// or denied.
// A denial sets the ttl (retention, epoch seconds).
func decisionWrite(r *Request, to, by, byName, now string, expiresAt, reason *string, ttl int64) *store.Write {
	upd := expression.Set(expression.Name("status"), expression.Value(to)).
		Set(expression.Name("decidedBy"), expression.Value(by)).
		Set(expression.Name("decisionSource"), expression.Value(SourceHuman)).
		Set(expression.Name("updatedAt"), expression.Value(now))
	if reason != nil {
		upd = upd.Set(expression.Name("reason"), expression.Value(*reason))
	}
	if to == StatusApproved {
		pk, sk := expiryKeys(r.OrgID, r.ID, *expiresAt)
		upd = upd.Set(expression.Name("approvedByName"), expression.Value(byName)).
			Set(expression.Name("expiresAt"), expression.Value(*expiresAt)).
			Set(expression.Name("GSI2PK"), expression.Value(pk)).Set(expression.Name("GSI2SK"), expression.Value(sk))
	} else {
		upd = retain(upd.Set(expression.Name("deniedByName"), expression.Value(byName)).
			Remove(expression.Name("GSI2PK")).Remove(expression.Name("GSI2SK")), ttl)
	}
	upd = listMove(upd, r, to)
	return store.Change(r.PK, r.SK, upd).When(store.Is("status", StatusPending)).Exists()
}

// revokeWrite moves r from the status it was read in (approved,
// auto_approved or actuating) to revoked, kept until ttl; a concurrent move
// fails it.
func revokeWrite(r *Request, byName, reason, now string, ttl int64) *store.Write {
	upd := expression.Set(expression.Name("status"), expression.Value(StatusRevoked)).
		Set(expression.Name("revokedByName"), expression.Value(byName)).
		Set(expression.Name("revokeReason"), expression.Value(reason)).
		Set(expression.Name("updatedAt"), expression.Value(now)).
		Remove(expression.Name("GSI2PK")).Remove(expression.Name("GSI2SK"))
	upd = listMove(retain(upd, ttl), r, StatusRevoked)
	return store.Change(r.PK, r.SK, upd).When(store.Is("status", r.Status)).Exists()
}

// dropCommandWrite takes r's queued actuation command (if any) off its
// device's queue: a revoked or expired elevation is never actuated later.
func dropCommandWrite(r *Request) *store.Write {
	if r.CommandID == nil {
		return nil
	}
	k := device.AgentKey(r.DeviceID)
	return store.Change(k.PK, k.SK, expression.Remove(expression.Name("commands."+*r.CommandID)))
}

// ActuateWrite moves approved request r to actuating, recording the command
// that carries it; only an approved request not yet claimed.
func ActuateWrite(r *Request, commandID string, now time.Time) *store.Write {
	k := RequestKeys(r.OrgID, r.ID)
	upd := expression.Set(expression.Name("status"), expression.Value(StatusActuating)).
		Set(expression.Name("commandId"), expression.Value(commandID)).
		Set(expression.Name("updatedAt"), expression.Value(clock.Format(now)))
	upd = listMove(upd, r, StatusActuating)
	cond := store.Is("status", StatusApproved).And(expression.Name("commandId").AttributeNotExists())
	return store.Change(k.PK, k.SK, upd).When(cond).Exists()
}

// expireWrite moves r to expired, kept until ttl, when it is still in status
// from.
func expireWrite(r *Request, from, now string, ttl int64) *store.Write {
	upd := expression.Set(expression.Name("status"), expression.Value(StatusExpired)).
		Set(expression.Name("updatedAt"), expression.Value(now)).
		Remove(expression.Name("GSI2PK")).Remove(expression.Name("GSI2SK"))
	upd = listMove(retain(upd, ttl), r, StatusExpired)
	cond := store.Is("status", from)
	if from != StatusPending {
		cond = cond.And(expression.Name("expiresAt").LessThanEqual(expression.Value(now)))
	}
	return store.Change(r.PK, r.SK, upd).When(cond).Exists()
}

// ---- PAM rows: rules, signer groups, software policies, config ----------

// Policies is everything the decision chain reads for one organization.
type Policies struct {
	Rules            []Rule
	SignerGroups     []SignerGroup
	SoftwarePolicies []SoftwarePolicy
	Config           *Config
	// Version is the organization's policies version (0 when never changed).
	Version int64
}

// versionSK is the row of an organization's policies version: every change
// of its rules, signer groups, software policies or config adds one to its
// counter v in the change's own transaction (PoliciesChanged). Its sort key
// sorts before every other PAM# row ('!' before any letter), so the Query of
// Policies reads it first: a version the Query sees is never older than the
// rows it reads after it (see chainCache).
const versionSK = "PAM#!VERSION"

// PoliciesChanged is the write that moves orgID's policies version: every
// transaction that writes or deletes a PAM# row carries it.
func PoliciesChanged(orgID string) *store.Write {
	return store.Change(store.OrgPK(orgID), versionSK, expression.Add(expression.Name("v"), expression.Value(1)).
		Set(expression.Name("orgId"), expression.Value(orgID)))
}

// policyRows reads every PAM# row of orgID with one Query (paged by the
// store) and the version they carry.
func (s Store) policyRows(ctx context.Context, orgID string) ([]store.Item, int64, error) {
	items, err := s.St.All(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "PAM#"})
	if err != nil {
		return nil, 0, fmt.Errorf("pam policies of %s: %w", orgID, err)
	}
	var v int64
	for _, it := range items {
		if sk, ok := it["SK"].(*types.AttributeValueMemberS); ok && sk.Value == versionSK {
			if n, ok := it["v"].(*types.AttributeValueMemberN); ok {
				v, _ = strconv.ParseInt(n.Value, 10, 64)
			}
			break
		}
	}
	return items, v, nil
}

// Policies reads every PAM# row of orgID with one Query (paged by the store).
func (s Store) Policies(ctx context.Context, orgID string) (*Policies, error) {
	items, v, err := s.policyRows(ctx, orgID)
	if err != nil {
		return nil, err
	}
	return decodePolicies(items, v)
}

// decodePolicies turns PAM# rows into records.
func decodePolicies(items []store.Item, version int64) (*Policies, error) {
	out := &Policies{Rules: []Rule{}, SignerGroups: []SignerGroup{}, SoftwarePolicies: []SoftwarePolicy{}, Version: version}
	for _, it := range items {
		var k store.Keys
		if err := store.Unmarshal(it, &k); err != nil {
			return nil, err
		}
		switch {
		case strings.HasPrefix(k.SK, "PAM#RULE#"):
			var r Rule
			if err := store.Unmarshal(it, &r); err != nil {
				return nil, err
			}
			out.Rules = append(out.Rules, r)
		case strings.HasPrefix(k.SK, "PAM#SG#"):
			var g SignerGroup
			if err := store.Unmarshal(it, &g); err != nil {
				return nil, err
			}
			out.SignerGroups = append(out.SignerGroups, g)
		case strings.HasPrefix(k.SK, "PAM#SWP#"):
			var p SoftwarePolicy
			if err := store.Unmarshal(it, &p); err != nil {
				return nil, err
			}
			out.SoftwarePolicies = append(out.SoftwarePolicies, p)
		case k.SK == "PAM#CONFIG":
			var c Config
			if err := store.Unmarshal(it, &c); err != nil {
				return nil, err
			}
			out.Config = &c
		}
	}
	return out, nil
}

// Rules lists the rules of orgID.
func (s Store) Rules(ctx context.Context, orgID string) ([]Rule, error) {
	return s.rules().All(ctx, orgID)
}

// SignerGroup reads signer group id of orgID.
func (s Store) SignerGroup(ctx context.Context, orgID, id string) (*SignerGroup, error) {
	return s.signerGroups().Get(ctx, orgID, id)
}

// Config reads orgID's config; the default (require_approval) when none is stored.
func (s Store) Config(ctx context.Context, orgID string) (*Config, error) {
	var c Config
	err := s.St.Get(ctx, store.OrgPK(orgID), "PAM#CONFIG", &c)
	if errors.Is(err, store.ErrNotFound) {
		return &Config{OrgID: orgID, DefaultUnmatchedVerdict: VerdictRequireApproval}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pam config of %s: %w", orgID, err)
	}
	return &c, nil
}

// Commit runs a transaction.
func (s Store) Commit(ctx context.Context, tx *store.Tx) error { return s.St.Commit(ctx, tx) }

// replaceWrite rewrites a record whose updatedAt is still was (optimistic
// concurrency for PATCH).
func replaceWrite(record any, was string) *store.Write {
	return store.Put(record).When(store.Is("updatedAt", was))
}

// ---- policy settings -------------------------------------------------------

// SettingsRows reads the PAMSET rows of orgID and partnerID in one
// BatchGetItem of consistency c (missing rows are nil).
func (s Store) SettingsRows(ctx context.Context, c store.Consistency, orgID, partnerID string) (org, partner *Settings, err error) {
	refs := []store.KeyRef{OrgSettingsKey(orgID)}
	if partnerID != "" {
		refs = append(refs, PartnerSettingsKey(partnerID))
	}
	items, err := s.St.BatchGetWith(ctx, c, refs...)
	if err != nil {
		return nil, nil, fmt.Errorf("pam settings of %s: %w", orgID, err)
	}
	read := func(k store.KeyRef) (*Settings, error) {
		it, ok := items[k.PK+"|"+k.SK]
		if !ok {
			return nil, nil
		}
		var st Settings
		if err := store.Unmarshal(it, &st); err != nil {
			return nil, err
		}
		return &st, nil
	}
	if org, err = read(OrgSettingsKey(orgID)); err != nil {
		return nil, nil, err
	}
	if partnerID != "" {
		if partner, err = read(PartnerSettingsKey(partnerID)); err != nil {
			return nil, nil, err
		}
	}
	return org, partner, nil
}

// settingWrite sets (or, with v nil, clears) one level's value. level is
// partner or organization (attr "value"), or site, group or device (the map
// entry of targetID).
func settingWrite(k store.KeyRef, level, targetID string, v *bool) *store.Write {
	var name expression.NameBuilder
	switch level {
	case "site":
		name = expression.Name("sites." + targetID)
	case "group":
		name = expression.Name("groups." + targetID)
	case "device":
		name = expression.Name("devices." + targetID)
	default:
		name = expression.Name("value")
	}
	if v == nil {
		return store.Change(k.PK, k.SK, expression.Remove(name))
	}
	return store.Change(k.PK, k.SK, expression.Set(name, expression.Value(*v)))
}

// settingsInit makes sure the PAMSET row has its three maps, so a map entry
// can be set (DynamoDB cannot set a member of a missing map).
func settingsInit(k store.KeyRef) *store.Write {
	upd := expression.Set(expression.Name("sites"), expression.Name("sites").IfNotExists(expression.Value(map[string]bool{}))).
		Set(expression.Name("groups"), expression.Name("groups").IfNotExists(expression.Value(map[string]bool{}))).
		Set(expression.Name("devices"), expression.Name("devices").IfNotExists(expression.Value(map[string]bool{})))
	return store.Change(k.PK, k.SK, upd)
}
