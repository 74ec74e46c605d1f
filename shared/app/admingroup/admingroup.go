// Package admingroup wires the admin function, served at /api/v1/admin and
// /admin: the webhook dead-letter queue and account deletion administration.
package admingroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/deletiongroup"
	"github.com/gale-rmm/gale/shared/app/webhooksgroup"
	"github.com/gale-rmm/gale/shared/deletion"
	"github.com/gale-rmm/gale/shared/webhook"
)

// Admin builds the admin group.
func Admin(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&webhook.AdminHandler{DLQ: webhooksgroup.DLQ(d)}).Routes(rt)
	(&deletion.AdminHandler{Svc: deletiongroup.Service(d)}).Routes(rt)
	return d.Edge(rt), nil
}
