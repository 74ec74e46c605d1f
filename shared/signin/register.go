package signin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gale-rmm/gale/shared/passhash"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
)

// Errors of registration.
var (
	// ErrRegistrationDisabled answers both registration routes when
	// ENABLE_REGISTRATION is not true: the routes behave as if they did not exist.
	ErrRegistrationDisabled = fault.NotFound("Not Found")
	// ErrEmailTaken is a registration with an e-mail any account (active,
	// invited, disabled or SSO-only) already holds.
	ErrEmailTaken = fault.Conflict("Email is already registered")
)

// MaxName bounds user and partner names (up to 255 characters).
const MaxName = 255

// PartnerAdminRoleName names the partner-owned copy of Partner Admin that
// partner signup creates (distinct from the system role's name, so role lists
// tell the two apart).
const PartnerAdminRoleName = "Administrator"

// Registration is the body of POST /auth/register.
type Registration struct {
	Name     string `json:"name"`
	Email    string `json:"email"`
	Password string `json:"password"`
}

// PartnerRegistration is the body of POST /auth/register-partner.
type PartnerRegistration struct {
	PartnerName string `json:"partnerName"`
	Name        string `json:"name"`
	Email       string `json:"email"`
	Password    string `json:"password"`
}

// check validates the account fields and returns the normalized e-mail and name.
func (in Registration) check(f fault.Fields) (email, name string) {
	name = strings.TrimSpace(in.Name)
	valid.Name(f, "name", name, MaxName)
	email = strings.TrimSpace(in.Email)
	valid.Email(f, "email", email)
	checkPassword(f, "password", in.Password)
	return user.NormalizeEmail(email), name
}

// newUser builds an active user with a hashed password (one Argon2id run, on
// the success and the duplicate path alike).
func (s *Service) newUser(email, name, password string) (*user.User, error) {
	h, err := passhash.Hash(password)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	return &user.User{ID: uuid.NewString(), Email: email, Name: name, PasswordHash: h, Status: user.StatusActive,
		PasswordChangedAt: now, Version: 1, CreatedAt: now, UpdatedAt: now}, nil
}

// actor is the new or signing-in user as an audit actor.
func actor(u *user.User, c Client) audit.Actor {
	return audit.Actor{ID: u.ID, Email: u.Email, Type: string(authz.KindUser), IP: c.IP, UserAgent: c.UserAgent}
}

// commitSignup commits a registration; a failed condition on the e-mail guard
// (write guard) is ErrEmailTaken.
func (s *Service) commitSignup(ctx context.Context, tx *store.Tx, guard int, email string) error {
	err := s.St.Commit(ctx, tx)
	var te *store.TxError
	if errors.As(err, &te) && (te.FailedAt(guard) || te.FailedAt(-1)) {
		return ErrEmailTaken
	}
	if err != nil {
		return fmt.Errorf("register %s: %w", email, err)
	}
	return nil
}

// Register creates an active user with no scope (profile and MFA only, until
// invited) and signs them in.
func (s *Service) Register(ctx context.Context, in Registration, c Client) (Result, error) {
	// Public route: no principal exists; the setting and the per-IP limit stand in for authorization.
	if !s.EnableRegistration {
		return Result{}, ErrRegistrationDisabled
	}
	f := fault.Fields{}
	email, name := in.check(f)
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	if err := s.Limits.Allow(ctx, ratelimit.Register, c.SourceIP); err != nil {
		return Result{}, err
	}
	u, err := s.newUser(email, name, in.Password)
	if err != nil {
		return Result{}, err
	}
	tx := (&store.Tx{}).Add(user.CreateWrites(u)...).Add(
		audit.Put(s.Clock, audit.Entry{Actor: actor(u, c), Action: "user.register",
			ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email}))
	if err := s.commitSignup(ctx, tx, 1, u.Email); err != nil {
		return Result{}, err
	}
	return s.Complete(ctx, u, nil, false, c)
}

// RegisterPartner creates a partner, its own copy of Partner Admin and the user
// holding it with orgAccess all, with their audit records, in one transaction,
// then signs the user in.
func (s *Service) RegisterPartner(ctx context.Context, in PartnerRegistration, c Client) (Result, error) {
	// Public route: no principal exists; the setting and the per-IP limit stand in for authorization.
	if !s.EnableRegistration {
		return Result{}, ErrRegistrationDisabled
	}
	f := fault.Fields{}
	partnerName := strings.TrimSpace(in.PartnerName)
	valid.Name(f, "partnerName", partnerName, MaxName)
	email, name := Registration{Name: in.Name, Email: in.Email, Password: in.Password}.check(f)
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	if err := s.Limits.Allow(ctx, ratelimit.RegisterPartner, c.SourceIP); err != nil {
		return Result{}, err
	}
	u, err := s.newUser(email, name, in.Password)
	if err != nil {
		return Result{}, err
	}
	now := u.CreatedAt
	p := tenant.Partner{ID: uuid.NewString(), Name: partnerName, CreatedAt: now, UpdatedAt: now}
	p.Keys = tenant.PartnerKeys(p.ID)
	r, roleWrites := role.NewPartnerAdmin(p.ID, PartnerAdminRoleName, now)
	m := &user.Membership{ID: uuid.NewString(), UserID: u.ID, Scope: authz.ScopePartner, PartnerID: p.ID,
		RoleID: r.ID, RoleOwner: r.Owner, OrgAccess: authz.OrgAccessAll, CreatedAt: now}
	a := actor(u, c)
	tx := (&store.Tx{}).Add(user.CreateWrites(u)...) // 0 profile, 1 e-mail guard
	tx.Add(store.PutNew(p)).Add(roleWrites...).Add(user.AddMembershipWrite(m))
	tx.Add(
		audit.Put(s.Clock, audit.Entry{Actor: a, PartnerID: p.ID, Action: "partner.register",
			ResourceType: "partner", ResourceID: p.ID, ResourceName: p.Name,
			Details: map[string]any{"userId": u.ID, "roleId": r.ID}}),
		audit.Put(s.Clock, audit.Entry{Actor: a, PartnerID: p.ID, Action: "role.create",
			ResourceType: "role", ResourceID: r.ID, ResourceName: r.Name,
			Details: map[string]any{"permissions": r.Permissions, "forceMfa": r.ForceMFA, "copiedFrom": role.PartnerAdminID}}),
		audit.Put(s.Clock, audit.Entry{Actor: a, PartnerID: p.ID, Action: "user.register",
			ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email,
			Details: map[string]any{"scope": m.Scope, "roleId": r.ID, "orgAccess": m.OrgAccess}}),
	)
	if err := s.commitSignup(ctx, tx, 1, u.Email); err != nil {
		return Result{}, err
	}
	return s.Complete(ctx, u, m, false, c)
}
