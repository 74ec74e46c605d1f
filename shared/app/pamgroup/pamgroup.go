// Package pamgroup wires the pam function (/api/v1/pam) and the PAM service
// that agent ingest, device actuation and the sweeper share.
package pamgroup

import (
	"net/http"
	// Lambda's provided.al2023 image has no zoneinfo and the PAM service loads
	// rules' time-window zones (shared/pam/policy) with time.LoadLocation, so the
	// database (about 450 KB) is embedded here, where the service is wired, and
	// not in shared/pam/policy: functions that only use PAM types (auth and users
	// through shared/push) do not carry it. tests/coldstart holds the split.
	_ "time/tzdata"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/pushgroup"
	"github.com/gale-rmm/gale/shared/channel"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/tenant"
)

// PAM builds the pam group.
func PAM(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&pam.Handler{Svc: Service(d)}).Routes(rt)
	return d.Edge(rt), nil
}

// Service builds the PAM service. The first decision on a request closes its
// mobile approval requests (shared/push). Its pending requests fan them out
// from the events queue, not here (pam.Service.FanOut stays nil): the
// elevation.requested event, written in the ingest's transaction, is what
// queues the fan-out, which the webhook-worker runs with the queue's retries
// (webhookworkergroup, push.Fanout.OnEvent). Nothing runs after an answer.
func Service(d *app.Deps) *pam.Service {
	mobile := pushgroup.Mobile(d)
	s := &pam.Service{St: pam.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store}, Clock: d.Clock, Events: d.Events,
		PendingTTL: d.Cfg.PAMPendingTTL, Retention: d.Cfg.PAMRequestRetention, ActuatorEnabled: d.Cfg.PAMActuatorEnabled,
		Decided: mobile.Decided}
	if p := Pusher(d); p != nil {
		s.Channel = p
	}
	return s
}

// Pusher posts to agents' live connections through the channel's Management
// API (CHANNEL_ENDPOINT); nil without one.
func Pusher(d *app.Deps) *channel.Pusher {
	return channel.NewPusher(d.Store, channel.NewPoster(d.AWS, d.Cfg.ChannelEndpoint), d.Log)
}
