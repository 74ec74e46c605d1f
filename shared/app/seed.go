package app

import (
	"context"
	"fmt"
	"strings"
)

// Seeded describes the demo data, for the local runtime's banner.
type Seeded struct {
	Lines []string
}

// Banner is what the local runtime prints after start.
func (s Seeded) Banner() string {
	if len(s.Lines) == 0 {
		return ""
	}
	return "\n" + strings.Join(s.Lines, "\n") + "\n"
}

// Seed creates the demo data once (idempotent). Until the identity core lands
// there is nothing to sign in with, and Seed says so.
func Seed(ctx context.Context, d *Deps) (Seeded, error) {
	_ = ctx
	return Seeded{Lines: []string{fmt.Sprintf("Demo sign-in: not available yet (identity not built); system admin will be %s", d.Cfg.SystemAdminEmail)}}, nil
}
