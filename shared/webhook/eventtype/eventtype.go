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

// Group is one row of the catalogue.
type Group struct {
	Name  string
	Types []string
}

// Catalogue lists every subscribable type by group, in the document's order.
var Catalogue = []Group{
	{"Device", []string{DeviceEnrolled, DeviceOnline, DeviceOffline, DeviceUpdated, DeviceDecommissioned}},
	{"Alert", []string{AlertTriggered, AlertAcknowledged, AlertResolved, AlertEscalated}},
	{"Script", []string{ScriptStarted, ScriptCompleted, ScriptFailed}},
	{"Automation", []string{AutomationStarted, AutomationCompleted, AutomationFailed}},
	{"Policy", []string{PolicyEvaluated, PolicyViolation, PolicyCompliant}},
	{"Patch", []string{PatchAvailable, PatchApproved, PatchInstalled, PatchFailed, PatchRollback}},
	{"Other", []string{SecurityScoreChanged, RemoteSessionStarted, RemoteSessionEnded, UserLogin, UserLogout, SessionLogin, SessionLogout}},
	{"Elevation", []string{ElevationRequested, ElevationAutoApproved, ElevationApproved, ElevationDenied,
		ElevationActuating, ElevationExpired, ElevationRevoked}},
}

// All returns every subscribable type.
func All() []string {
	var out []string
	for _, g := range Catalogue {
		out = append(out, g.Types...)
	}
	return out
}

// Known reports whether t is a subscribable type.
func Known(t string) bool {
	for _, g := range Catalogue {
		if slices.Contains(g.Types, t) {
			return true
		}
	}
	return false
}

// Sendable reports whether a test delivery may carry t: a subscribable type or
// webhook.test.
func Sendable(t string) bool { return t == Test || Known(t) }
