// Package search is the global search (GET /api/v1/search): one
// case-insensitive substring search over device hostnames and display names,
// script names and descriptions, alert titles and messages, and the static
// settings entries.
//
// Rules: q is 1-100 characters after trimming and matched literally (no
// wildcard or pattern characters); each category is searched only when the
// caller may read it (devices:read, scripts:read, alerts:read; settings
// entries by their own permission), within the organizations, sites and
// device groups it can reach; results are balanced, so that no category takes
// more than ceil(limit/2) places while others have matches. It stores nothing:
// it reads each reachable organization's partition (one Query per category
// per organization) and filters in memory.
package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gale-rmm/gale/shared/alert"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/script"
)

// Bounds.
const (
	MaxQuery     = 100
	DefaultLimit = 20
	MaxLimit     = 50
)

// Result is one search result item.
type Result struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Href        string `json:"href,omitempty"`
}

// setting is a static settings entry and the permission that shows it (none
// for everyone's own settings).
type setting struct {
	Result
	perm *authz.Permission
}

func perm(p authz.Permission) *authz.Permission { return &p }

var settings = []setting{
	{Result{ID: "settings-profile", Type: "settings", Title: "Profile settings", Description: "Your name, e-mail address, phone number and avatar", Href: "/settings/profile"}, nil},
	{Result{ID: "settings-security", Type: "settings", Title: "Security settings", Description: "Password, two-factor authentication, passkeys and sessions", Href: "/settings/security"}, nil},
	{Result{ID: "settings-users", Type: "settings", Title: "User management", Description: "Invite people, assign roles and manage access", Href: "/settings/users"}, perm(authz.UsersRead)},
	{Result{ID: "settings-api-keys", Type: "settings", Title: "API keys", Description: "Keys and service principals for programmatic access", Href: "/settings/api-keys"}, perm(authz.OrgsRead)},
	{Result{ID: "settings-webhooks", Type: "settings", Title: "Webhooks", Description: "Signed HTTP notifications of platform events", Href: "/settings/webhooks"}, perm(authz.OrgsRead)},
	{Result{ID: "settings-sso", Type: "settings", Title: "Single sign-on", Description: "Sign in through your identity provider (OIDC)", Href: "/settings/sso"}, perm(authz.OrgsRead)},
}

// Orgs lists the organizations a caller reaches; tenant.Store satisfies it.
type Orgs interface {
	Reachable(ctx context.Context, p *authz.Principal) ([]string, error)
}

// Devices lists the devices a caller may see; device.Service satisfies it.
type Devices interface {
	Reachable(ctx context.Context, p *authz.Principal, software bool) ([]device.Device, error)
}

// Scripts and Alerts list what a caller may read; script.Service and
// alert.Service satisfy them.
type (
	Scripts interface {
		Visible(ctx context.Context, p *authz.Principal, orgIDs []string) ([]script.Script, error)
	}
	Alerts interface {
		Visible(ctx context.Context, p *authz.Principal, orgIDs []string) ([]alert.Alert, error)
	}
)

// Service searches.
type Service struct {
	Orgs    Orgs
	Devices Devices
	Scripts Scripts
	Alerts  Alerts
}

// Search runs q for the caller.
func (s *Service) Search(ctx context.Context, q string, limit int) ([]Result, error) {
	p, err := authz.InTenant(ctx)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	q = strings.TrimSpace(q)
	if n := len([]rune(q)); n < 1 || n > MaxQuery {
		f.Add("q", fmt.Sprintf("must be 1-%d characters after trimming", MaxQuery))
	}
	if limit < 1 || limit > MaxLimit {
		f.Add("limit", fmt.Sprintf("must be between 1 and %d", MaxLimit))
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	needle := strings.ToLower(q)
	has := func(ss ...string) bool {
		for _, s := range ss {
			if strings.Contains(strings.ToLower(s), needle) {
				return true
			}
		}
		return false
	}
	var orgIDs []string
	if p.Holds(authz.ScriptsRead) || p.Holds(authz.AlertsRead) {
		if orgIDs, err = s.Orgs.Reachable(ctx, p); err != nil {
			return nil, err
		}
	}
	var cats [4][]Result
	if p.Holds(authz.DevicesRead) {
		devs, err := s.Devices.Reachable(ctx, p, false)
		if err != nil {
			return nil, err
		}
		for _, d := range devs {
			dn := deref(d.DisplayName)
			if has(d.Hostname, dn) {
				cats[0] = append(cats[0], Result{ID: d.ID, Type: "devices", Title: d.Hostname, Description: cmp.Or(dn, d.OSType)})
			}
		}
	}
	scs, err := s.Scripts.Visible(ctx, p, orgIDs)
	if err != nil {
		return nil, err
	}
	for _, sc := range scs {
		if has(sc.Name, deref(sc.Description)) {
			cats[1] = append(cats[1], Result{ID: sc.ID, Type: "scripts", Title: sc.Name, Description: deref(sc.Description)})
		}
	}
	as, err := s.Alerts.Visible(ctx, p, orgIDs)
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		if has(a.Title, a.Message) {
			cats[2] = append(cats[2], Result{ID: a.ID, Type: "alerts", Title: a.Title, Description: a.Message})
		}
	}
	for _, st := range settings {
		if (st.perm == nil || p.Holds(*st.perm)) && has(st.Title, st.Description) {
			cats[3] = append(cats[3], st.Result)
		}
	}
	for i := range cats {
		slices.SortFunc(cats[i], func(a, b Result) int {
			return cmp.Or(strings.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title)), strings.Compare(a.ID, b.ID))
		})
	}
	return balance(cats[:], limit), nil
}

// balance takes up to ceil(limit/2) of each category, then fills what is left
// of limit from the categories that have more, in category order.
func balance(cats [][]Result, limit int) []Result {
	capPer := (limit + 1) / 2
	take := make([]int, len(cats))
	n := 0
	for i, c := range cats {
		take[i] = min(len(c), capPer)
		n += take[i]
	}
	for i, c := range cats {
		for n < limit && take[i] < len(c) {
			take[i]++
			n++
		}
	}
	out := []Result{}
	for i, c := range cats {
		out = append(out, c[:take[i]]...)
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
