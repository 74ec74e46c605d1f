// Package auditlogsgroup wires the audit-logs function (/api/v1/audit-logs).
// The audit log is its own function rather than a route of an existing group:
// no group owns it (every group writes audit rows, none reads them), and its
// export answers up to 5,000 rows (about 1 MB read), a load kept apart from
// the cold starts and concurrency of the routes of any other group.
package auditlogsgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/auditlog"
	"github.com/gale-rmm/gale/shared/tenant"
)

// AuditLogs builds the audit-logs group.
func AuditLogs(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	svc := &auditlog.Service{St: d.Store, Orgs: tenant.Store{St: d.Store}}
	(&auditlog.Handler{Svc: svc}).Routes(rt)
	return d.Edge(rt), nil
}
