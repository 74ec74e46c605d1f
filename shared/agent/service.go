package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/enrollment"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// Errors of the agent routes.
var (
	ErrInvalidKey     = fault.Unauthorized("Invalid enrollment key")
	ErrKeyExpired     = fault.Unauthorized("Enrollment key expired")
	ErrToken          = fault.Unauthorized("Invalid agent token")
	ErrDecommissioned = fault.Forbidden("Device is decommissioned")
	ErrQuarantined    = fault.Forbidden("Device is quarantined")
	ErrCommand        = fault.NotFound("Command not found")
	ErrRate           = fault.RateLimited("Too many requests", 1)
)

// Keys finds enrollment keys by their hash; enrollment.Store satisfies it.
type Keys interface {
	Guard(ctx context.Context, hash string) (*enrollment.Guard, error)
}

// PAMPolicy answers whether UAC interception is enabled for a device (the PAM
// policy feature); nil answers false, the platform default.
type PAMPolicy func(ctx context.Context, a *device.Agent) (bool, error)

// Service holds the agent rules.
type Service struct {
	Devices device.Store
	Keys    Keys
	Events  *event.Publisher
	Limits  ratelimit.Limiter
	Clock   clock.Clock
	Pepper  []byte
	PAM     PAMPolicy
	// ChannelURL is the agent channel's WebSocket URL (shared/channel; config
	// CHANNEL_URL); empty, enrollment and heartbeats name no channel.
	ChannelURL string
}

// channelURL is the URL device id connects to: the channel's URL naming the
// device (the token alone does not say which agent row to check).
func (s *Service) channelURL(id string) string {
	if s.ChannelURL == "" {
		return ""
	}
	return s.ChannelURL + "?deviceId=" + id
}

// Config is what the agent is told at enrollment and on every heartbeat.
type Config struct {
	HeartbeatIntervalSeconds int        `json:"heartbeatIntervalSeconds"`
	PAM                      *PAMConfig `json:"pam,omitempty"`
}

// PAMConfig is the agent's PAM settings.
type PAMConfig struct {
	UACInterceptionEnabled bool `json:"uacInterceptionEnabled"`
}

// EnrollInput is the enrollment body.
type EnrollInput struct {
	EnrollmentKey *string          `json:"enrollmentKey"`
	Hostname      *string          `json:"hostname"`
	OSType        *string          `json:"osType"`
	OSVersion     *string          `json:"osVersion"`
	OSBuild       *string          `json:"osBuild"`
	Architecture  *string          `json:"architecture"`
	AgentVersion  *string          `json:"agentVersion"`
	DeviceRole    *string          `json:"deviceRole"`
	IsHeadless    *bool            `json:"isHeadless"`
	Hardware      *device.Hardware `json:"hardware"`
	Network       *device.Network  `json:"network"`
}

// Enrolled is the enrollment answer.
type Enrolled struct {
	DeviceID  string  `json:"deviceId"`
	OrgID     string  `json:"orgId"`
	SiteID    *string `json:"siteId"`
	AuthToken string  `json:"authToken"`
	Config    Config  `json:"config"`
	// ChannelURL is where the agent opens its channel
	// (docs/decisions.md#connecting-to-the-channel).
	ChannelURL string `json:"channelUrl,omitempty"`
}

// Enroll consumes an enrollment key and creates the device, its token and the
// device.enrolled event in one transaction. The key is the credential: the
// route is public and limited per source IP before any lookup.
func (s *Service) Enroll(ctx context.Context, ip string, in EnrollInput) (*Enrolled, error) {
	if err := s.Limits.Allow(ctx, ratelimit.AgentEnroll, ip); err != nil {
		return nil, err
	}
	raw, d, err := validateEnroll(in)
	if err != nil {
		return nil, err
	}
	if !enrollment.WellFormed(raw) {
		return nil, ErrInvalidKey
	}
	keyHash := enrollment.Hash(s.Pepper, raw)
	g, err := s.Keys.Guard(ctx, keyHash)
	switch {
	case device.IsNotFound(err):
		return nil, ErrInvalidKey
	case err != nil:
		return nil, err
	}
	now := s.Clock.Now()
	ts := clock.Format(now)
	if g.ExpiresAt <= ts {
		return nil, ErrKeyExpired
	}
	token, hash, err := NewToken()
	if err != nil {
		return nil, err
	}
	d.ID, d.OrgID, d.PartnerID, d.SiteID = uuid.NewString(), g.OrgID, g.PartnerID, g.SiteID
	d.EnrolledAt, d.LastSeenAt, d.UpdatedAt = ts, &ts, ts
	d.Keys = device.Keys(d.OrgID, d.ID)
	device.Seen(d, now)
	ev, err := event.New(s.Clock, eventtype.DeviceEnrolled, d.OrgID, map[string]any{"deviceId": d.ID, "hostname": d.Hostname,
		"siteId": d.SiteID, "osType": d.OSType, "enrollmentKeyId": g.KeyID})
	if err != nil {
		return nil, err
	}
	if err := s.Events.Commit(ctx, s.enrollTx(d, g, keyHash, hash, ip), ev); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			// Used up, rotated, deleted, or its organization or site is gone.
			return nil, ErrInvalidKey
		}
		return nil, fmt.Errorf("enroll device: %w", err)
	}
	return &Enrolled{DeviceID: d.ID, OrgID: d.OrgID, SiteID: d.SiteID, AuthToken: token, ChannelURL: s.channelURL(d.ID),
		Config: Config{HeartbeatIntervalSeconds: seconds(device.NextInterval(d.ID, now, false))}}, nil
}

// validateEnroll answers the enrollment key of in and the device it
// describes, still without its id, tenant and times; or the fields at fault.
func validateEnroll(in EnrollInput) (string, *device.Device, error) {
	in.sanitize()
	f := fault.Fields{}
	raw := req(f, "enrollmentKey", in.EnrollmentKey, 1, 128)
	d := &device.Device{GroupIDs: []string{}, Hostname: req(f, "hostname", in.Hostname, 1, 255),
		OSType: req(f, "osType", in.OSType, 1, 32), Status: device.StatusOnline, DeviceRole: "unknown",
		Tags: []string{}, CustomFields: map[string]string{}}
	if in.OSType != nil {
		valid.OneOf(f, "osType", d.OSType, device.OSTypes...)
	}
	d.OSVersion = req(f, "osVersion", in.OSVersion, 1, 100)
	d.Architecture = req(f, "architecture", in.Architecture, 1, 32)
	if in.Architecture != nil {
		valid.OneOf(f, "architecture", d.Architecture, device.Architectures...)
	}
	d.AgentVersion = req(f, "agentVersion", in.AgentVersion, 1, 50)
	if in.DeviceRole != nil {
		d.DeviceRole = *in.DeviceRole
		valid.OneOf(f, "deviceRole", d.DeviceRole, device.Roles...)
	}
	opt(f, "osBuild", in.OSBuild, 100)
	d.OSBuild = in.OSBuild
	if in.Hardware != nil {
		checkHardware(f, "hardware.", in.Hardware)
		d.Hardware = *in.Hardware
	}
	if in.Network != nil {
		checkNetwork(f, "network.", in.Network)
		d.Network = *in.Network
	}
	if in.IsHeadless != nil {
		d.IsHeadless = *in.IsHeadless
	}
	if err := f.Err(); err != nil {
		return "", nil, err
	}
	return raw, d, nil
}

// enrollTx is the enrollment's one transaction: the key consumed (its
// condition refuses a used, rotated or deleted key), the device and its token,
// the organization's and site's device counts, the audit record.
func (s *Service) enrollTx(d *device.Device, g *enrollment.Guard, keyHash, tokenHash, ip string) *store.Tx {
	tx := (&store.Tx{}).Add(enrollment.Consume(g.OrgID, g.KeyID, keyHash, d.EnrolledAt))
	tx.Add(device.EnrollWrites(d, tokenHash)...)
	tx.Add(tenant.CountOrg(d.OrgID, "", tenant.CountDevices, 1))
	if d.SiteID != nil {
		tx.Add(tenant.CountSite(d.OrgID, *d.SiteID, tenant.CountDevices, 1))
	}
	return tx.Add(audit.Put(s.Clock, audit.Entry{Actor: audit.Actor{ID: d.ID, Type: string(authz.KindAgent), IP: ip}, OrgID: d.OrgID,
		Action: "device.enroll", ResourceType: "device", ResourceID: d.ID, ResourceName: d.Hostname,
		Details: map[string]any{"enrollmentKeyId": g.KeyID}}))
}

// AuthenticateAgent checks an agent token for the device in the path (for the
// heartbeat one GetItem; for every ingest route one BatchGetItem that also
// reads the device's ingest window, see meter.go) and implements
// auth.AgentAuthenticator.
func (s *Service) AuthenticateAgent(ctx context.Context, r *http.Request, token string) (*authz.Principal, error) {
	id := r.PathValue("id")
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	if !wellFormed(token) {
		return nil, ErrToken
	}
	sl := slotFrom(ctx)
	var a *device.Agent
	var err error
	if sl != nil && r.Pattern != heartbeatPattern {
		a, sl.window, err = s.agentAndWindow(ctx, id)
		sl.windowRead = err == nil
	} else {
		a, err = s.Devices.Agent(ctx, id)
	}
	if err := checkToken(a, err, token); err != nil {
		return nil, err
	}
	if sl != nil {
		sl.agent = a
	}
	return principal(a), nil
}

// Authenticate is the token check of the agent channel's connect (one
// GetItem): the same answers as the HTTP routes' AuthenticateAgent.
func (s *Service) Authenticate(ctx context.Context, id, token string) (*device.Agent, error) {
	if err := valid.PathID("deviceId", id); err != nil {
		return nil, err
	}
	if !wellFormed(token) {
		return nil, ErrToken
	}
	a, err := s.Devices.Agent(ctx, id)
	if err := checkToken(a, err, token); err != nil {
		return nil, err
	}
	return a, nil
}

// checkToken judges agent row a (read with err) against token.
func checkToken(a *device.Agent, err error, token string) error {
	switch {
	case device.IsNotFound(err):
		return ErrToken
	case err != nil:
		return err
	}
	if !sameHash(HashToken(token), a.TokenHash) {
		return ErrToken
	}
	switch a.Status {
	case device.StatusDecommissioned:
		return ErrDecommissioned
	case device.StatusQuarantined:
		return ErrQuarantined
	}
	return nil
}

func principal(a *device.Agent) *authz.Principal {
	p := &authz.Principal{Kind: authz.KindAgent, DeviceID: a.DeviceID, Scope: authz.ScopeOrg, OrgID: a.OrgID, PartnerID: a.PartnerID, Perms: authz.Set{}}
	if a.SiteID != nil {
		p.SiteIDs = []string{*a.SiteID}
	}
	return p
}

// ChannelHeartbeat is a heartbeat frame of the agent channel: the HTTP
// heartbeat's rules and writes for agent row a, which the channel read
// (its status is checked again here: a device blocked since it connected is
// refused).
// frame is the heartbeat frame's JSON ({"type": "heartbeat"} and the HTTP
// body's fields); it answers the commands to re-send.
func (s *Service) ChannelHeartbeat(ctx context.Context, a *device.Agent, frame []byte) ([]device.Command, error) {
	switch a.Status {
	case device.StatusDecommissioned:
		return nil, ErrDecommissioned
	case device.StatusQuarantined:
		return nil, ErrQuarantined
	}
	var in HeartbeatInput
	if err := json.Unmarshal(frame, &in); err != nil {
		return nil, fault.BadRequest("Invalid JSON body")
	}
	ctx, sl := withSlot(authz.WithPrincipal(ctx, principal(a)))
	sl.agent = a
	out, err := s.Heartbeat(ctx, a.DeviceID, in)
	if err != nil {
		return nil, err
	}
	return out.Commands, nil
}

// caller is the preamble of every token route: the authenticated agent of
// device id, with its row, and the slot in which the token check left what it
// read (nil for a caller outside the router).
func (s *Service) caller(ctx context.Context, id string) (*device.Agent, *slot, error) {
	sl := slotFrom(ctx)
	p, err := authz.Authenticated(ctx)
	if err != nil {
		return nil, nil, err
	}
	if p.Kind != authz.KindAgent || p.DeviceID != id {
		return nil, nil, ErrToken
	}
	if sl != nil && sl.agent != nil {
		return sl.agent, sl, nil
	}
	a, err := s.Devices.Agent(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return a, sl, nil
}

// HeartbeatInput is the heartbeat body.
type HeartbeatInput struct {
	Status        *string         `json:"status"`
	AgentVersion  *string         `json:"agentVersion"`
	Metrics       *device.Metrics `json:"metrics"`
	LastUser      *string         `json:"lastUser"`
	UptimeSeconds *int64          `json:"uptimeSeconds"`
	Hostname      *string         `json:"hostname"`
	OSVersion     *string         `json:"osVersion"`
}

// HeartbeatReply is the heartbeat answer.
type HeartbeatReply struct {
	Commands []device.Command `json:"commands"`
	Config   Config           `json:"config"`
	// ChannelURL: see Enrolled.
	ChannelURL string `json:"channelUrl,omitempty"`
}

// Heartbeat records that device id is alive (see the package doc for its
// budget); the channel is taken as open when the agent row says so
// (Connect's marker).
func (s *Service) Heartbeat(ctx context.Context, id string, in HeartbeatInput) (*HeartbeatReply, error) {
	return s.HeartbeatOn(ctx, id, in, false)
}

// HeartbeatOn is Heartbeat for a caller that knows whether the agent's channel
// is open (connected): the agent is told ChannelInterval. The last-seen index
// is left alone only when the agent row carries Connect's marker (the
// connection then holds presence: its key is at least ConnectedFor ahead); a flag
// without the marker would leave the device to the sweep.
func (s *Service) HeartbeatOn(ctx context.Context, id string, in HeartbeatInput, connected bool) (*HeartbeatReply, error) {
	a, _, err := s.caller(ctx, id)
	if err != nil {
		return nil, err
	}
	in.sanitize()
	f := fault.Fields{}
	health := req(f, "status", in.Status, 1, 16)
	if in.Status != nil {
		valid.OneOf(f, "status", health, "ok", "warning", "error")
	}
	av := req(f, "agentVersion", in.AgentVersion, 1, 50)
	if in.Metrics != nil {
		percent(f, "metrics.cpuPercent", in.Metrics.CPUPercent)
		percent(f, "metrics.ramPercent", in.Metrics.RAMPercent)
		percent(f, "metrics.diskPercent", in.Metrics.DiskPercent)
	}
	opt(f, "lastUser", in.LastUser, 255)
	opt(f, "osVersion", in.OSVersion, 100)
	if in.Hostname != nil {
		req(f, "hostname", in.Hostname, 1, 255)
	}
	if in.UptimeSeconds != nil && *in.UptimeSeconds < 0 {
		f.Add("uptimeSeconds", "must be at least 0")
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	marked := a.Connected(now)
	connected = connected || marked
	b := device.Beat{At: now, Health: health, AgentVersion: av, Metrics: in.Metrics, LastUser: in.LastUser,
		UptimeSeconds: in.UptimeSeconds, Hostname: in.Hostname, OSVersion: in.OSVersion}
	to := device.BeatStatus(a.Status)
	plan := device.PlanBeat(a, b, to, marked)
	switch {
	case to != a.Status || !a.Live:
		err = s.transition(ctx, a, b, to, plan)
	case plan.Write:
		err = s.beat(ctx, a, b, plan)
	}
	if err != nil {
		return nil, err
	}
	// A poll re-sends every command not yet acknowledged on the channel nor
	// expired, with its id (device.Agent.Pending).
	reply := &HeartbeatReply{Commands: a.Pending(b.At), ChannelURL: s.channelURL(id),
		Config: Config{HeartbeatIntervalSeconds: seconds(device.NextInterval(id, now, connected)), PAM: &PAMConfig{}}}
	if s.PAM != nil {
		on, err := s.PAM(ctx, a)
		if err != nil {
			return nil, err
		}
		reply.Config.PAM.UACInterceptionEnabled = on
	}
	return reply, nil
}

func seconds(d time.Duration) int { return int(d / time.Second) }

// beat writes a heartbeat that changed something: the device update, then the
// agent row's digest, which counts it against BeatWrites a minute (checked
// first on the row the token check read, so a device past the limit writes
// nothing).
func (s *Service) beat(ctx context.Context, a *device.Agent, b device.Beat, p device.BeatPlan) error {
	if p.Full(a) {
		return fault.RateLimited("Too many requests", device.BeatsRetryAfter(b.At))
	}
	err := s.Devices.Beat(ctx, a, b, p)
	switch {
	case errors.Is(err, store.ErrConditionFailed):
		return ErrRate // the status moved since the token check
	case errors.Is(err, device.ErrBeatsFull):
		return fault.RateLimited("Too many requests", device.BeatsRetryAfter(b.At))
	}
	return err
}

// transition moves the device (its rows, and its agent row with the
// heartbeat's digest) to status to with the event; a device written before
// live rows existed takes its live row the same way, with no event when its
// status stays. A heartbeat only ever moves a device online
// (device.BeatStatus); the type is spelled as the catalogue's constant,
// which is how shared/webhook/eventtype/raised_test.go finds what is raised.
func (s *Service) transition(ctx context.Context, a *device.Agent, b device.Beat, to string, p device.BeatPlan) error {
	tx := (&store.Tx{}).Add(device.TransitionWrites(a, b, to, p)...)
	if to == a.Status {
		err := s.Devices.Commit(ctx, tx)
		if device.FailedAt(err, 0) || device.FailedAt(err, 1) {
			return ErrRate
		}
		return err
	}
	if to != device.StatusOnline {
		return fmt.Errorf("device %s: a heartbeat cannot move it to %q", a.DeviceID, to)
	}
	ev, err := event.New(s.Clock, eventtype.DeviceOnline, a.OrgID, map[string]any{"deviceId": a.DeviceID, "previousStatus": a.Status})
	if err != nil {
		return err
	}
	err = s.Events.Commit(ctx, tx, ev)
	if device.FailedAt(err, 0) {
		return ErrRate
	}
	if device.FailedAt(err, 1) {
		return fault.Conflict("Device status changed concurrently").WithCode(fault.CodeRaceLost)
	}
	return err
}

// Ingest checks the token route's caller and counts one request against the
// device's ingest limit (600 a minute).
func (s *Service) ingest(ctx context.Context, id string) (*device.Agent, error) {
	a, sl, err := s.caller(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.count(ctx, id, sl); err != nil {
		return nil, err
	}
	return a, nil
}

// PutHardware replaces the device's hardware facts.
func (s *Service) PutHardware(ctx context.Context, id string, h device.Hardware) error {
	a, err := s.ingest(ctx, id)
	if err != nil {
		return err
	}
	cleanHardware(&h)
	f := fault.Fields{}
	checkHardware(f, "", &h)
	if err := f.Err(); err != nil {
		return err
	}
	return s.inventory(ctx, a, device.HardwareChange(a.OrgID, id, h, s.Clock.Now()), "hardware")
}

// PutNetwork replaces the device's network facts.
func (s *Service) PutNetwork(ctx context.Context, id string, n device.Network) error {
	a, err := s.ingest(ctx, id)
	if err != nil {
		return err
	}
	cleanNetwork(&n)
	f := fault.Fields{}
	checkNetwork(f, "", &n)
	if err := f.Err(); err != nil {
		return err
	}
	return s.inventory(ctx, a, device.NetworkChange(a.OrgID, id, n, s.Clock.Now()), "network")
}

// SoftwareInput is the software body.
type SoftwareInput struct {
	Software *[]device.Software `json:"software"`
}

// SoftwareReply tells the agent what was stored.
type SoftwareReply struct {
	SoftwareCount int  `json:"softwareCount"`
	Changed       bool `json:"changed"`
}

// PutSoftware replaces the device's software list; an unchanged list writes nothing.
func (s *Service) PutSoftware(ctx context.Context, id string, in SoftwareInput) (*SoftwareReply, error) {
	a, err := s.ingest(ctx, id)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	if in.Software == nil {
		f.Add("software", "is required")
	} else if len(*in.Software) > device.MaxSoftware {
		f.Addf("software", "must have at most %d entries", device.MaxSoftware)
	} else {
		for i, sw := range *in.Software {
			p := fmt.Sprintf("software.%d.", i)
			valid.Len(f, p+"name", sw.Name, 1, 255)
			valid.Len(f, p+"version", sw.Version, 0, 100)
			valid.Len(f, p+"vendor", sw.Vendor, 0, 255)
			if len(f) > 20 {
				break // enough to fix; do not answer megabytes of errors
			}
		}
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	parts, hash, err := device.EncodeSoftware(*in.Software)
	if err != nil {
		return nil, err
	}
	d, err := s.Devices.Get(ctx, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	count := len(*in.Software)
	if d.SoftwareHash == hash {
		return &SoftwareReply{SoftwareCount: count, Changed: false}, nil
	}
	if len(parts) > store.MaxTxItems-1-d.SoftwareChunks {
		return nil, fault.New(fault.KindTooLarge, "Request body too large")
	}
	tx := (&store.Tx{}).Add(device.SoftwareWrites(a.OrgID, id, parts, hash, count, d.SoftwareChunks, d.SoftwareHash, s.Clock.Now())...)
	if err := s.Devices.Commit(ctx, tx); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, fault.Conflict("Software list changed concurrently").WithCode(fault.CodeRaceLost)
		}
		return nil, fmt.Errorf("store software of %s: %w", id, err)
	}
	return &SoftwareReply{SoftwareCount: count, Changed: true}, nil
}

// ResultInput is a command result body.
type ResultInput struct {
	Status *string `json:"status"`
	Output *string `json:"output"`
}

// CommandResult records the result of a queued command, once.
func (s *Service) CommandResult(ctx context.Context, id, commandID string, in ResultInput) (*device.CommandResult, error) {
	a, err := s.ingest(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("commandId", commandID); err != nil {
		return nil, err
	}
	f := fault.Fields{}
	st := req(f, "status", in.Status, 1, 16)
	if in.Status != nil {
		valid.OneOf(f, "status", st, "completed", "failed")
	}
	if in.Output != nil && len(*in.Output) > MaxBody-1024 {
		f.Addf("output", "must be at most %d bytes", MaxBody-1024)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	cmd, ok := a.Commands[commandID]
	if !ok {
		return nil, ErrCommand
	}
	r := &device.CommandResult{DeviceID: id, CommandID: commandID, Type: cmd.Type, Status: st, Output: in.Output,
		ReportedAt: clock.Format(s.Clock.Now())}
	tx := (&store.Tx{}).Add(device.ResultWrites(a.OrgID, r)...)
	if err := s.Devices.Commit(ctx, tx); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, ErrCommand
		}
		return nil, fmt.Errorf("command result %s: %w", commandID, err)
	}
	return r, nil
}

// ---- validation ----------------------------------------------------------

// req checks a required string field of min..max characters without control
// characters and returns it.
func req(f fault.Fields, path string, v *string, min, max int) string {
	if v == nil {
		f.Add(path, "is required")
		return ""
	}
	valid.Len(f, path, *v, min, max)
	noControls(f, path, *v)
	return *v
}

// opt checks an optional string of at most max characters.
func opt(f fault.Fields, path string, v *string, max int) {
	if v != nil {
		valid.Len(f, path, *v, 0, max)
		noControls(f, path, *v)
	}
}

func noControls(f fault.Fields, path, s string) {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			f.Add(path, "must not contain control characters")
			return
		}
	}
}

func percent(f fault.Fields, path string, v *float64) {
	if v != nil && (*v < 0 || *v > 100) {
		f.Add(path, "must be between 0 and 100")
	}
}

func nonNegative(f fault.Fields, path string, v *int) {
	if v != nil && *v < 0 {
		f.Add(path, "must be at least 0")
	}
}

func checkHardware(f fault.Fields, prefix string, h *device.Hardware) {
	opt(f, prefix+"manufacturer", h.Manufacturer, 255)
	opt(f, prefix+"model", h.Model, 255)
	opt(f, prefix+"serialNumber", h.SerialNumber, 255)
	opt(f, prefix+"cpuModel", h.CPUModel, 255)
	opt(f, prefix+"gpuModel", h.GPUModel, 255)
	nonNegative(f, prefix+"cpuCores", h.CPUCores)
	nonNegative(f, prefix+"ramTotalMb", h.RAMTotalMb)
	nonNegative(f, prefix+"diskTotalGb", h.DiskTotalGb)
}

func checkNetwork(f fault.Fields, prefix string, n *device.Network) {
	opt(f, prefix+"ipAddress", n.IPAddress, 64)
	opt(f, prefix+"publicIp", n.PublicIP, 64)
	opt(f, prefix+"macAddress", n.MACAddress, 64)
}
