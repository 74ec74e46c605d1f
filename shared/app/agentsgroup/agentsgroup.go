// Package agentsgroup wires the agents function and the agent-token check.
package agentsgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/agent"
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/pamgroup"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/enrollment"
	"github.com/gale-rmm/gale/shared/ratelimit"
)

// Agents builds the agents group (/agents); its router authenticates with a
// copy of the process's authenticator that also checks agent tokens (the
// shared one is left as it is).
func Agents(d *app.Deps) (http.Handler, error) {
	svc := Service(d)
	a := *d.Auth
	a.Agents = svc
	rt := d.RouterWith(&a)
	(&agent.Handler{Svc: svc}).Routes(rt)
	ps := pamgroup.Service(d)
	svc.PAM = ps.UACEnabled
	(&agent.ElevationHandler{Svc: svc, PAM: ps}).Routes(rt)
	return d.Edge(agent.Wrap(rt)), nil
}

// Service builds the agent service.
func Service(d *app.Deps) *agent.Service {
	return &agent.Service{Devices: device.Store{St: d.Store}, Keys: enrollment.Store{St: d.Store}, Events: d.Events,
		Limits: ratelimit.Limiter{St: d.Store, Clock: d.Clock}, Clock: d.Clock, Pepper: d.Cfg.EnrollPepper,
		ChannelURL: d.Cfg.ChannelURL}
}
