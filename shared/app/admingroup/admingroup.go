// Package admingroup wires the admin function, served at /api/v1/admin and
// /admin: the webhook dead-letter queue (built) and account deletion
// administration (not built yet: 501).
package admingroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/webhookgroup"
	"github.com/gale-rmm/gale/shared/routes"
	"github.com/gale-rmm/gale/shared/webhook"
)

// Admin builds the admin group.
func Admin(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	prefixes := []string{routes.APIBase + "/admin", "/admin"}
	(&webhook.AdminHandler{DLQ: webhookgroup.DLQ(d)}).Routes(rt, prefixes...)
	for _, p := range prefixes {
		rt.Pending(
			"GET "+p+"/account-deletion-requests",
			"GET "+p+"/account-deletion-requests/pending-count",
			"GET "+p+"/account-deletion-requests/{id}",
			"POST "+p+"/account-deletion-requests/{id}/process",
		)
	}
	return d.Edge(rt), nil
}
