// Package eventtype is the catalogue of platform event types: the strings a
// webhook subscribes to in its events array and the types the domain packages
// raise through shared/event. It is a table and nothing else, so any package can
// name an event without importing the webhook service.
//
// The catalogue is the OpenAPI document's list (WebhookEventType): the device,
// alert, script, automation, policy, patch and other groups, the elevation
// events of PAM, and webhook.test for test deliveries (not subscribable).
package eventtype

import "slices"

// Device events.
const (
	DeviceEnrolled       = "device.enrolled"
	DeviceOnline         = "device.online"
	DeviceOffline        = "device.offline"
	DeviceUpdated        = "device.updated"
	DeviceDecommissioned = "device.decommissioned"
)

// Alert events.
const (
	AlertTriggered    = "alert.triggered"
	AlertAcknowledged = "alert.acknowledged"
	AlertResolved     = "alert.resolved"
	AlertEscalated    = "alert.escalated"
)

// Script events.
const (
	ScriptStarted   = "script.started"
	ScriptCompleted = "script.completed"
	ScriptFailed    = "script.failed"
)

// Automation events.
const (
	AutomationStarted   = "automation.started"
	AutomationCompleted = "automation.completed"
	AutomationFailed    = "automation.failed"
)

// Policy events.
const (
	PolicyEvaluated = "policy.evaluated"
	PolicyViolation = "policy.violation"
	PolicyCompliant = "policy.compliant"
)

// Patch events.
const (
	PatchAvailable = "patch.available"
	PatchApproved  = "patch.approved"
	PatchInstalled = "patch.installed"
	PatchFailed    = "patch.failed"
	PatchRollback  = "patch.rollback"
)

// Other events. SessionLogin and SessionLogout concern device user sessions;
// UserLogin and UserLogout platform sign-ins.
const (
	SecurityScoreChanged = "security.score_changed"
	RemoteSessionStarted = "remote.session.started"
	RemoteSessionEnded   = "remote.session.ended"
	UserLogin            = "user.login"
	UserLogout           = "user.logout"
	SessionLogin         = "session.login"
	SessionLogout        = "session.logout"
)

// Elevation events of PAM (an extension of the catalogue).
const (
	ElevationRequested    = "elevation.requested"
	ElevationAutoApproved = "elevation.auto_approved"
	ElevationApproved     = "elevation.approved"
	ElevationDenied       = "elevation.denied"
	ElevationActuating    = "elevation.actuating"
	ElevationExpired      = "elevation.expired"
	ElevationRevoked      = "elevation.revoked"
)

// Test is the type of test deliveries (POST /webhooks/:id/test).
const Test = "webhook.test"

// Type is one subscribable type: its name, what it means, and whether some
// operation of Gale raises it yet (a type can be subscribed to before anything
// raises it; the spec's catalogue is larger than what Gale does today).
// raised_test.go walks the source and fails when Raised disagrees with the
// calls of shared/event.New.
type Type struct {
	Name        string `json:"type"`
	Description string `json:"description"`
	Raised      bool   `json:"raised"`
}

// Group is one row of the catalogue.
type Group struct {
	Name  string
	Types []Type
}

// Catalogue lists every subscribable type by group, in the document's order.
var Catalogue = []Group{
	{"Device", []Type{
		{DeviceEnrolled, "A device enrolled with an enrollment key.", true},
		{DeviceOnline, "A device came online (a heartbeat or its channel after it was offline or pending).", true},
		{DeviceOffline, "A device stopped reporting and was marked offline.", true},
		{DeviceUpdated, "A device's details or inventory changed.", true},
		{DeviceDecommissioned, "A device was decommissioned.", true},
	}},
	{"Alert", []Type{
		{AlertTriggered, "An alert was raised on a device.", true},
		{AlertAcknowledged, "An alert was acknowledged.", true},
		{AlertResolved, "An alert was resolved.", true},
		{AlertEscalated, "An alert was escalated.", false},
	}},
	{"Script", []Type{
		{ScriptStarted, "A script started on a device.", false},
		{ScriptCompleted, "A script completed on a device.", false},
		{ScriptFailed, "A script failed on a device.", false},
	}},
	{"Automation", []Type{
		{AutomationStarted, "An automation started.", false},
		{AutomationCompleted, "An automation completed.", false},
		{AutomationFailed, "An automation failed.", false},
	}},
	{"Policy", []Type{
		{PolicyEvaluated, "A policy was evaluated on a device.", false},
		{PolicyViolation, "A device violates a policy.", false},
		{PolicyCompliant, "A device complies with a policy again.", false},
	}},
	{"Patch", []Type{
		{PatchAvailable, "A patch is available for a device.", false},
		{PatchApproved, "A patch was approved.", false},
		{PatchInstalled, "A patch was installed on a device.", false},
		{PatchFailed, "A patch failed to install on a device.", false},
		{PatchRollback, "A patch was rolled back on a device.", false},
	}},
	{"Other", []Type{
		{SecurityScoreChanged, "A device's security score changed.", false},
		{RemoteSessionStarted, "A remote session to a device started.", false},
		{RemoteSessionEnded, "A remote session to a device ended.", false},
		{UserLogin, "A user signed in to the platform.", true},
		{UserLogout, "A user signed out of the platform.", true},
		{SessionLogin, "A user signed in on a device.", false},
		{SessionLogout, "A user signed out on a device.", false},
	}},
	{"Elevation", []Type{
		{ElevationRequested, "An elevation request awaits a decision.", true},
		{ElevationAutoApproved, "An elevation request was approved by a rule.", true},
		{ElevationApproved, "An elevation request was approved by a person.", true},
		{ElevationDenied, "An elevation request was denied (by a person, a rule or the default verdict).", true},
		{ElevationActuating, "An approved elevation is being carried out on the device.", true},
		{ElevationExpired, "An elevation request or grant expired.", true},
		{ElevationRevoked, "An elevation grant was revoked.", true},
	}},
}

// Types returns every subscribable type with its description, in the
// catalogue's order.
func Types() []Type {
	var out []Type
	for _, g := range Catalogue {
		out = append(out, g.Types...)
	}
	return out
}

// All returns every subscribable type's name.
func All() []string {
	var out []string
	for _, t := range Types() {
		out = append(out, t.Name)
	}
	return out
}

// Known reports whether t is a subscribable type.
func Known(t string) bool {
	for _, g := range Catalogue {
		if slices.ContainsFunc(g.Types, func(x Type) bool { return x.Name == t }) {
			return true
		}
	}
	return false
}

// Sendable reports whether a test delivery may carry t: a subscribable type or
// webhook.test.
func Sendable(t string) bool { return t == Test || Known(t) }
