package push

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// Errors of the push-target routes.
var (
	ErrTargetNotFound = fault.NotFound("Push target not found")
	ErrChanged        = fault.Conflict("Changed concurrently; read it again").WithCode(fault.CodeRaceLost)
)

// Service manages the caller's own push targets.
type Service struct {
	St    Store
	Clock clock.Clock
}

// TargetInput is the body of POST /users/me/push-targets.
type TargetInput struct {
	Platform *string `json:"platform"`
	Token    *string `json:"token"`
}

// validToken checks a token's shape: APNs device tokens are hexadecimal
// (64 digits today; up to 200 accepted), FCM registration tokens are URL-safe
// text (letters, digits, '-', '_', ':') of at most 4096 characters.
func validToken(f fault.Fields, platform, token string) {
	switch platform {
	case PlatformAPNS:
		if len(token) < 64 || len(token) > 200 || strings.Trim(strings.ToLower(token), "0123456789abcdef") != "" {
			f.Add("token", "must be an APNs device token (64 to 200 hexadecimal digits)")
		}
	case PlatformFCM:
		ok := len(token) >= 32 && len(token) <= 4096
		for _, c := range token {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':') {
				ok = false
				break
			}
		}
		if !ok {
			f.Add("token", "must be an FCM registration token (32 to 4096 letters, digits, '-', '_' or ':')")
		}
	}
}

// self is the caller, who must be a signed-in user (API keys and agents have
// no phone).
func self(ctx context.Context) (*authz.Principal, error) { return authz.SignedIn(ctx) }

// Register adds (or refreshes) a push target of the caller. created is false
// when the caller had already registered this token (its updatedAt moves).
func (s *Service) Register(ctx context.Context, in TargetInput) (t *Target, created bool, err error) {
	p, err := self(ctx)
	if err != nil {
		return nil, false, err
	}
	f := fault.Fields{}
	platform := valid.Required(f, "platform", in.Platform)
	if in.Platform != nil {
		valid.OneOf(f, "platform", platform, PlatformAPNS, PlatformFCM)
	}
	token := valid.Required(f, "token", in.Token)
	if in.Token != nil {
		validToken(f, platform, token)
	}
	if err := f.Err(); err != nil {
		return nil, false, err
	}
	if platform == PlatformAPNS {
		token = strings.ToLower(token)
	}
	for attempt := 0; attempt < 3; attempt++ {
		t, created, err = s.register(ctx, p.UserID, platform, token)
		if !errors.Is(err, store.ErrConditionFailed) {
			return t, created, err
		}
	}
	return nil, false, ErrChanged
}

func (s *Service) register(ctx context.Context, userID, platform, token string) (*Target, bool, error) {
	ts, g, err := s.St.targetsAndGuard(ctx, userID, platform, token)
	if err != nil {
		return nil, false, err
	}
	now := clock.Format(s.Clock.Now())
	prev := ts.Version
	tx := &store.Tx{}
	if g != nil && g.UserID == userID {
		if i := slices.IndexFunc(ts.Targets, func(t Target) bool { return t.ID == g.TargetID }); i >= 0 {
			ts.Targets[i].UpdatedAt = now
			t := ts.Targets[i]
			tx.Add(putTargets(ts, prev), store.Assert(guardKey(platform, token).PK, "PUSHTOKEN", store.Is("userId", userID)))
			if err := s.St.St.Commit(ctx, tx); err != nil {
				return nil, false, fmt.Errorf("refresh push target: %w", err)
			}
			return &t, false, nil
		}
	}
	if g != nil && g.UserID != userID {
		// The token moves from another account: it leaves that account's row.
		other, err := s.St.Targets(ctx, g.UserID)
		if err != nil {
			return nil, false, err
		}
		if i := slices.IndexFunc(other.Targets, func(t Target) bool { return t.ID == g.TargetID }); i >= 0 {
			v := other.Version
			other.Targets = slices.Delete(other.Targets, i, i+1)
			tx.Add(putTargets(other, v))
		}
	}
	t := Target{ID: uuid.NewString(), Platform: platform, Token: token, CreatedAt: now, UpdatedAt: now}
	ts.Targets = append(ts.Targets, t)
	for len(ts.Targets) > MaxTargets {
		oldest := 0
		for i, x := range ts.Targets {
			if x.UpdatedAt < ts.Targets[oldest].UpdatedAt {
				oldest = i
			}
		}
		tx.Add(dropGuard(ts.Targets[oldest], userID))
		ts.Targets = slices.Delete(ts.Targets, oldest, oldest+1)
	}
	tx.Add(putTargets(ts, prev), putGuard(platform, token, userID, t.ID, g))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		return nil, false, fmt.Errorf("register push target: %w", err)
	}
	return &t, true, nil
}

// List returns the caller's push targets in registration order.
func (s *Service) List(ctx context.Context) ([]Target, error) {
	p, err := self(ctx)
	if err != nil {
		return nil, err
	}
	ts, err := s.St.Targets(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	out := ts.Targets
	if out == nil {
		out = []Target{}
	}
	return out, nil
}

// Delete removes a push target of the caller.
func (s *Service) Delete(ctx context.Context, id string) error {
	p, err := self(ctx)
	if err != nil {
		return err
	}
	if err := valid.PathID("id", id); err != nil {
		return err
	}
	for attempt := 0; attempt < 3; attempt++ {
		ts, err := s.St.Targets(ctx, p.UserID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(ts.Targets, func(t Target) bool { return t.ID == id })
		if i < 0 {
			return ErrTargetNotFound
		}
		t := ts.Targets[i]
		prev := ts.Version
		ts.Targets = slices.Delete(ts.Targets, i, i+1)
		err = s.St.St.Commit(ctx, (&store.Tx{}).Add(putTargets(ts, prev), dropGuard(t, p.UserID)))
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return fmt.Errorf("delete push target %s: %w", id, err)
		}
	}
	return ErrChanged
}
