// Package agent is the agent-facing surface (/api/v1/agents): enrollment with an
// enrollment key, the agent bearer token check, heartbeats, inventory uploads
// (hardware, software, network) and command results. It owns no rows of its
// own: devices, agent credential rows and software chunks belong to
// shared/device, enrollment keys to shared/enrollment.
//
// # Tokens
//
// An agent token is "agt_" + 64 hex characters (32 random bytes), returned once
// at enrollment. The agent row keeps only its SHA-256, compared in constant
// time. Decommissioning (or quarantining) the device blocks the token (403).
//
// # What a heartbeat reads and writes
//
// A heartbeat writes only what changed (shared/device, "Heartbeats"); its
// budget: docs/budgets.md, from tests/fixture/budgets.go. A steady heartbeat
// reads twice and writes nothing: the token check (GetItem of the
// agent row, which also carries the device's status, its pending commands,
// the digest of the last written heartbeat and the channel marker) and one
// BatchGetItem of the PAM policy-settings rows of its organization and
// partner (shared/pam: the reply's pam.uacInterceptionEnabled, resolved
// device -> group -> site -> organization -> partner, default true). A
// heartbeat that changes something (a fact, a metric band, or without a
// channel its 5-minute last-seen bucket) writes the live row, the device row
// before it when a fact changed (apart: one transaction would double the
// units of both), then the agent row's digest, which counts the write (at
// most device.BeatWrites a minute; past it 429 with the seconds to the
// minute's end, refused on the row already read, so nothing is written). A
// status transition (offline -> online) writes the device, the agent row and
// the outbox event in one transaction, then clears the outbox row after the
// SQS send.
// A heartbeat writes no audit, no event (but the transition's), no software.
// If the sweeper moves the device offline between the token check and the
// write, the update's status condition fails and the heartbeat answers 429
// once; the next one sees the new status and takes the transition path.
//
// Every answer tells the agent its next interval (device.NextInterval: 60 s
// +-10%, 300 s +-10% while its channel is open).
//
// # Presence
//
// The agent channel (its own package) calls Connect on $connect and
// Disconnect on $disconnect (presence.go); HeartbeatOn takes the channel's
// state from a caller that knows it.
//
// The other token routes (hardware, network, software, command results) are
// rarer and count against the shared fixed-window limiter (shared/ratelimit,
// rule agent-ingest-device, 600 a minute per device), one UpdateItem each.
//
// # Bodies
//
// Agent ingest bodies are limited to 32 KB (413 beyond), except PUT
// /agents/:id/software, which takes up to MaxSoftwareBody (2 MiB): 10,000
// entries of realistic size fit, and the list is stored gzipped in chunks.
package agent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/store"
)

// Limits of agent ingest.
const (
	MaxBody         = 32 << 10
	MaxSoftwareBody = 2 << 20
	tokenPrefix     = "agt_"
)

// NewToken returns a fresh agent token and its stored hash.
func NewToken() (token, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("agent token: %w", err)
	}
	token = tokenPrefix + hex.EncodeToString(b[:])
	return token, HashToken(token), nil
}

// HashToken is the stored form of an agent token.
func HashToken(token string) string {
	s := sha256.Sum256([]byte(token))
	return hex.EncodeToString(s[:])
}

// wellFormed reports whether token has the agt_ + 64 hex shape.
func wellFormed(token string) bool {
	if len(token) != len(tokenPrefix)+64 || token[:4] != tokenPrefix {
		return false
	}
	for _, c := range token[4:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func sameHash(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// slot carries the agent row read by the token check to the handler, so the
// heartbeat does not read it twice; for elevation ingest also the device's
// ingest window row, read in the same BatchGetItem (see meter.go).
type slot struct {
	agent      *device.Agent
	window     store.Item
	windowRead bool
}

type slotKey struct{}

func withSlot(ctx context.Context) (context.Context, *slot) {
	s := &slot{}
	return context.WithValue(ctx, slotKey{}, s), s
}

func slotFrom(ctx context.Context) *slot {
	s, _ := ctx.Value(slotKey{}).(*slot)
	return s
}
