// Package agentchannelgroup wires the agent-channel function: the WebSocket
// API's $connect, $disconnect and $default routes (shared/channel).
package agentchannelgroup

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/agentsgroup"
	"github.com/gale-rmm/gale/shared/app/pamgroup"
	"github.com/gale-rmm/gale/shared/channel"
	"github.com/gale-rmm/gale/shared/device"
)

// Handler builds the channel's Lambda handler (its authorizer and its
// routes): the agent token check, presence and heartbeat of the agents
// group, and the pusher for re-sends.
func Handler(d *app.Deps) *channel.Handler {
	svc := agentsgroup.Service(d)
	svc.PAM = pamgroup.Service(d).UACEnabled
	return &channel.Handler{Agents: svc, Rows: device.Store{St: d.Store}, Push: pamgroup.Pusher(d), Clock: d.Clock, Log: d.Log}
}
