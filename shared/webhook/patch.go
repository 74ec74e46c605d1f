package webhook

import (
	"context"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// PatchInput is the PATCH body: each field absent (kept), null or a value.
// secret and retryPolicy take null (clear); the others refuse it.
type PatchInput struct {
	Name        valid.Opt[string]      `json:"name"`
	URL         valid.Opt[string]      `json:"url"`
	Secret      valid.Opt[string]      `json:"secret"`
	Events      valid.Opt[[]string]    `json:"events"`
	Headers     valid.Opt[[]Header]    `json:"headers"`
	Status      valid.Opt[string]      `json:"status"`
	RetryPolicy valid.Opt[PolicyInput] `json:"retryPolicy"`
}

// fields are the fields the body named, sorted (the audit entry lists them).
func (in PatchInput) fields() []string {
	out := []string{}
	for _, f := range []struct {
		name string
		set  bool
	}{{"events", in.Events.Set}, {"headers", in.Headers.Set}, {"name", in.Name.Set}, {"retryPolicy", in.RetryPolicy.Set},
		{"secret", in.Secret.Set}, {"status", in.Status.Set}, {"url", in.URL.Set}} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// change is a validated PATCH: what the body changes, each value checked. A nil
// field keeps the stored value.
type change struct {
	name, status *string
	url          *string // a new URL (nil also when the masked form was sent back)
	secret       *string
	clearSecret  bool
	events       []string
	headers      *[]Header // masked values already replaced by the stored ones
	policy       *RetryPolicy
	clearPolicy  bool
}

// checkPatch validates a PATCH against the stored webhook (cur: its unsealed
// URL and headers). Field errors, and an unsafe URL, are its error.
func (s *Service) checkPatch(ctx context.Context, in PatchInput, cur *hook) (*change, error) {
	f := fault.Fields{}
	c := &change{}
	c.name = valid.PatchName(f, in.Name, MaxName)
	switch {
	case in.Secret.Wrong(f, "secret", "a string or null"):
	case in.Secret.Set && in.Secret.Value == nil:
		c.clearSecret = true
	case in.Secret.Set:
		checkSecret(f, *in.Secret.Value)
		c.secret = in.Secret.Value
	}
	if ev := in.Events.NotNull(f, "events", "an array"); ev != nil {
		c.events = checkEvents(f, *ev)
	}
	if hs := in.Headers.NotNull(f, "headers", "an array"); hs != nil {
		checked := checkHeaders(f, *hs, cur.headers)
		c.headers = &checked
	}
	if st := in.Status.NotNull(f, "status", "a string"); st != nil {
		valid.OneOf(f, "status", *st, StatusActive, StatusPaused, StatusFailed)
		c.status = st
	}
	switch {
	case in.RetryPolicy.Wrong(f, "retryPolicy", "an object or null"):
	case in.RetryPolicy.Set && in.RetryPolicy.Value == nil:
		c.clearPolicy = true
	case in.RetryPolicy.Set:
		c.policy = checkPolicy(f, in.RetryPolicy.Value)
	}
	newURL := ""
	if u := in.URL.NotNull(f, "url", "a string"); u != nil && *u != maskURL(cur.url) {
		c.url, newURL = u, *u
	}
	if err := s.checkURL(ctx, f, newURL, c.url != nil); err != nil {
		return nil, err
	}
	return c, nil
}

// patchWrite diffs a change against the stored webhook r: the webhook after it
// (secrets sealed) and the one write that makes it so, which applies only to
// r as read (same updatedAt) and not while a deletion is under way.
func (s *Service) patchWrite(r *record, c *change) (*record, *store.Write, error) {
	next := *r
	set := map[string]any{}
	var remove []string
	if c.name != nil {
		set["name"], next.Name = *c.name, *c.name
	}
	if c.status != nil {
		set["status"], next.Status = *c.status, *c.status
	}
	now := clock.Format(s.Clock.Now())
	if c.status != nil && *c.status == StatusActive && r.Status != StatusActive {
		// Made active again: a new failure run, and only events from now on
		// (failing.go).
		set["activeSince"], next.ActiveSince = now, now
		set[attrFailRun], next.FailRun = 0, 0
		remove, next.FailRunSince, next.FailedAt = append(remove, attrFailRunSince, "failedAt"), "", ""
	}
	if c.events != nil {
		set["events"], next.Events = c.events, c.events
	}
	switch {
	case c.clearPolicy:
		remove, next.RetryPolicy = append(remove, "retryPolicy"), nil
	case c.policy != nil:
		set["retryPolicy"], next.RetryPolicy = c.policy, c.policy
	}
	var err error
	if c.url != nil {
		if next.URL, err = s.seal(r.ID, "url", []byte(*c.url)); err != nil {
			return nil, nil, err
		}
		set["urlSealed"] = next.URL
	}
	switch {
	case c.clearSecret:
		remove, next.Secret = append(remove, "secretSealed"), ""
	case c.secret != nil:
		if next.Secret, err = s.seal(r.ID, "secret", []byte(*c.secret)); err != nil {
			return nil, nil, err
		}
		set["secretSealed"] = next.Secret
	}
	if c.headers != nil {
		if next.Headers, err = s.sealHeaders(r.ID, *c.headers); err != nil {
			return nil, nil, err
		}
		if next.Headers == "" {
			remove = append(remove, "headersSealed")
		} else {
			set["headersSealed"] = next.Headers
		}
	}
	next.UpdatedAt = now
	set["updatedAt"] = next.UpdatedAt
	w := changeWrite(r.OrgID, r.ID, set, remove)
	w.When(live().And(store.Is("updatedAt", r.UpdatedAt)))
	return &next, w, nil
}
