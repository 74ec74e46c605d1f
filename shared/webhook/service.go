package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/outbound"
	"github.com/gale-rmm/gale/shared/secret"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// Orgs reads organizations (Reach, and the list's reads); tenant.Store
// satisfies it.
type Orgs interface{ tenant.ListOrgs }

// Service holds the rules of /webhooks.
type Service struct {
	St    Store
	Orgs  Orgs
	Clock clock.Clock
	Box   *secret.Box
	Guard *outbound.Guard
	// Queue and DeliveryQueueURL enqueue test and retry deliveries.
	Queue            Queue
	DeliveryQueueURL string
}

// PolicyInput is a retryPolicy in a request; an omitted field keeps the
// platform default.
type PolicyInput struct {
	MaxRetries        *int     `json:"maxRetries"`
	InitialDelayMs    *int     `json:"initialDelayMs"`
	BackoffMultiplier *float64 `json:"backoffMultiplier"`
	MaxDelayMs        *int     `json:"maxDelayMs"`
}

// CreateInput is the create body.
type CreateInput struct {
	OrgID       string       `json:"orgId"`
	Name        *string      `json:"name"`
	URL         *string      `json:"url"`
	Secret      *string      `json:"secret"`
	Events      []string     `json:"events"`
	Headers     []Header     `json:"headers"`
	RetryPolicy *PolicyInput `json:"retryPolicy"`
}

// TestInput is the optional test body.
type TestInput struct {
	Event   *string         `json:"event"`
	Payload json.RawMessage `json:"payload"`
}

// ListFilter is the list query: page and limit, or the cursor of the page
// before (it wins over page).
type ListFilter struct {
	OrgID, Status string
	Page, Limit   int
	Cursor        string
}

// MaxTestPayload bounds a test delivery's payload (it is stored with the delivery).
const MaxTestPayload = 64 << 10

// authorize is the preamble of every route: a user session holding perm, in a
// tenant context or at system scope.
func (s *Service) authorize(ctx context.Context, perm authz.Permission) (*authz.Principal, error) {
	p, err := authz.Require(ctx, perm)
	if err != nil {
		return nil, err
	}
	if err := p.UserSession(); err != nil {
		return nil, err
	}
	if p.Scope != authz.ScopeSystem {
		if err := p.RequireTenantContext(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// orgParam resolves the organization a list or create names: organization
// callers their own (another id is 404), partner and system callers must name it.
func orgParam(p *authz.Principal, orgID string) (string, error) {
	switch {
	case orgID == "" && p.Scope == authz.ScopeOrg:
		return p.OrgID, nil
	case orgID == "":
		return "", ErrOrgContext
	case !valid.IsUUID(orgID):
		return "", fault.Invalid("orgId", "must be a UUID")
	case p.Scope == authz.ScopeOrg && orgID != p.OrgID:
		return "", ErrOrgNotFound
	}
	return orgID, nil
}

// webhook reads webhook id for p (tenant.Find: organization callers in their
// own partition, others by id through GSI1, the organization's reach decided
// there). withDeleting returns a webhook whose deletion is under way (DELETE
// resumes it).
func (s *Service) webhook(ctx context.Context, p *authz.Principal, id string, withDeleting bool) (*record, error) {
	r, err := tenant.Find(ctx, p, id, s.St.Get, s.St.ByID, ErrNotFound)
	if err != nil {
		return nil, err
	}
	if r.Deleting && !withDeleting {
		return nil, ErrNotFound
	}
	return r, nil
}

// EventTypes lists the catalogue: every type a webhook may subscribe to, with
// what it means and whether anything raises it yet. It holds no tenant's data,
// so any caller who may read webhooks sees the same list.
func (s *Service) EventTypes(ctx context.Context) ([]eventtype.Type, error) {
	if _, err := s.authorize(ctx, authz.OrgsRead); err != nil {
		return nil, err
	}
	return eventtype.Types(), nil
}

// List returns one page of the webhooks of the organization the caller names
// (or its own), newest first (ties by id): tenant.List over the webhook list
// indexes (the organization's GSI4 partition; partner and system callers name
// the organization, which Reach checks). Webhooks are organization-wide: a
// site- or device-group-restricted caller sees all of its organization's. The
// status filter is decided on the index rows (status is projected).
func (s *Service) List(ctx context.Context, f ListFilter) (*tenant.Page[Webhook], error) {
	p, err := s.authorize(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	if f.Status != "" && !slices.Contains([]string{StatusActive, StatusPaused, StatusFailed}, f.Status) {
		return nil, fault.Invalid("status", "must be one of: active, paused, failed")
	}
	orgID, err := orgParam(p, f.OrgID)
	if err != nil {
		return nil, err
	}
	q := tenant.ListQuery[record]{Page: f.Page, Limit: f.Limit, Cursor: f.Cursor}
	if p.Scope != authz.ScopeOrg {
		q.OrgID = orgID // Reach checks it
	}
	if f.Status != "" {
		q.Keep, q.Filtered = func(r *record) bool { return r.Status == f.Status }, true
	}
	pg, err := tenant.List(ctx, p, tenant.Listing[record]{St: s.St.St, Orgs: s.Orgs, Name: "WEBHOOKS",
		OrgPK: orgListPK, PartnerPK: partnerListPK, Descending: true, OrgWide: true}, q)
	if err != nil {
		return nil, err
	}
	out := &tenant.Page[Webhook]{Items: make([]Webhook, 0, len(pg.Items)), Page: pg.Page, Limit: pg.Limit, Total: pg.Total, Next: pg.Next}
	for i := range pg.Items {
		v, err := s.view(&pg.Items[i])
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *v)
	}
	return out, nil
}

// Get returns a webhook with its delivery statistics.
func (s *Service) Get(ctx context.Context, id string) (*Detail, error) {
	p, err := s.authorize(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	r, err := s.webhook(ctx, p, id, false)
	if err != nil {
		return nil, err
	}
	v, err := s.view(r)
	if err != nil {
		return nil, err
	}
	return &Detail{Webhook: v, DeliveryStats: Stats{Total: r.NTotal, Pending: r.NPending, Delivered: r.NDelivered,
		Failed: r.NFailed, Retrying: r.NRetrying, LastDeliveredAt: optional(r.LastSuccessAt)}}, nil
}

// Create adds a webhook to an organization the caller can reach.
func (s *Service) Create(ctx context.Context, in CreateInput) (*Webhook, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if err := p.RequireUnrestricted(); err != nil {
		return nil, err
	}
	orgID, err := orgParam(p, in.OrgID)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	name := ""
	if in.Name == nil {
		f.Add("name", "is required")
	} else {
		name = strings.TrimSpace(*in.Name)
		valid.Name(f, "name", name, MaxName)
	}
	if in.Secret != nil {
		checkSecret(f, *in.Secret)
	}
	events := checkEvents(f, in.Events)
	headers := checkHeaders(f, in.Headers, nil)
	policy := checkPolicy(f, in.RetryPolicy)
	rawURL := ""
	if in.URL == nil {
		f.Add("url", "is required")
	} else {
		rawURL = *in.URL
	}
	if err := s.checkURL(ctx, f, rawURL, in.URL != nil); err != nil {
		return nil, err
	}
	o, err := s.Orgs.Reach(ctx, p, orgID)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	r := &record{ID: uuid.NewString(), OrgID: o.ID, PartnerID: o.PartnerID, Name: name, Events: events,
		Status: StatusActive, RetryPolicy: policy, CreatedBy: p.UserID, CreatedAt: now, UpdatedAt: now}
	r.Keys = Key(r.OrgID, r.ID)
	setListKeys(r)
	if r.URL, err = s.seal(r.ID, "url", []byte(rawURL)); err != nil {
		return nil, err
	}
	if in.Secret != nil {
		if r.Secret, err = s.seal(r.ID, "secret", []byte(*in.Secret)); err != nil {
			return nil, err
		}
	}
	if r.Headers, err = s.sealHeaders(r.ID, headers); err != nil {
		return nil, err
	}
	tx := (&store.Tx{}).Add(store.PutNew(r), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: r.OrgID,
		Action: "webhook.create", ResourceType: "webhook", ResourceID: r.ID, ResourceName: r.Name,
		Details: map[string]any{"url": maskURL(rawURL), "events": events}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("create webhook: %w", err)
	}
	return s.view(r)
}

// checkURL validates a URL field: the form rules and DNS. When it is the only
// bad field the answer is `Invalid webhook URL` with the reason; with other bad
// fields it joins them under url.
func (s *Service) checkURL(ctx context.Context, f fault.Fields, raw string, given bool) error {
	reason := ""
	if given {
		if err := s.Guard.Validate(ctx, raw); err != nil {
			var ue *outbound.URLError
			if !errors.As(err, &ue) {
				return err
			}
			reason = ue.Reason
		}
	}
	if len(f) > 0 {
		if reason != "" {
			f.Add("url", reason)
		}
		return f.Err()
	}
	if reason != "" {
		return invalidURL(reason)
	}
	return nil
}

// Update applies a PATCH: decode (PatchInput), validate into a change
// (checkPatch), diff against the stored webhook (patchWrite), then one
// conditional write with its audit entry. A url equal to the masked form of
// the stored URL keeps the stored one; a header value sent back masked keeps
// its stored value.
func (s *Service) Update(ctx context.Context, id string, in PatchInput) (*Webhook, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if err := p.RequireUnrestricted(); err != nil {
		return nil, err
	}
	r, err := s.webhook(ctx, p, id, false)
	if err != nil {
		return nil, err
	}
	fields := in.fields()
	if len(fields) == 0 {
		return nil, ErrNoUpdates
	}
	cur, err := openRecord(s.Box, r)
	if err != nil {
		return nil, err
	}
	c, err := s.checkPatch(ctx, in, cur)
	if err != nil {
		return nil, err
	}
	next, w, err := s.patchWrite(r, c)
	if err != nil {
		return nil, err
	}
	tx := (&store.Tx{}).Add(w, audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: r.OrgID, Action: "webhook.update",
		ResourceType: "webhook", ResourceID: r.ID, ResourceName: next.Name, Details: map[string]any{"fields": fields}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		if isConflict(err) {
			return nil, ErrConcurrent
		}
		return nil, fmt.Errorf("update webhook %s: %w", r.ID, err)
	}
	return s.view(next)
}

// ErrConcurrent is a PATCH that lost to another change of the same webhook.
var ErrConcurrent = fault.Conflict("Webhook was changed concurrently").WithCode(fault.CodeRaceLost)

// Delete removes a webhook and all its deliveries: it hides the webhook first
// (so no new delivery is created and reads stop showing it), removes the
// deliveries, then the row. A repeated DELETE resumes an interrupted one.
func (s *Service) Delete(ctx context.Context, id string) error {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return err
	}
	if err := p.RequireUnrestricted(); err != nil {
		return err
	}
	r, err := s.webhook(ctx, p, id, true)
	if err != nil {
		return err
	}
	if !r.Deleting {
		tx := (&store.Tx{}).Add(markDeleting(r.OrgID, r.ID), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: r.OrgID,
			Action: "webhook.delete", ResourceType: "webhook", ResourceID: r.ID, ResourceName: r.Name}))
		if err := s.St.St.Commit(ctx, tx); err != nil {
			if isConflict(err) {
				return ErrNotFound
			}
			return fmt.Errorf("delete webhook %s: %w", r.ID, err)
		}
	}
	if _, err := s.St.deleteDeliveries(ctx, r.OrgID, r.ID); err != nil {
		return err
	}
	return s.St.St.Do(ctx, deleteWrite(r.OrgID, r.ID))
}

// DeliveryList is a page of deliveries and the matching total.
type DeliveryList struct {
	Data  []Delivery
	Total int
}

// Deliveries returns a page of a webhook's deliveries, newest first.
func (s *Service) Deliveries(ctx context.Context, id, status string, page, limit int) (*DeliveryList, error) {
	p, err := s.authorize(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	if status != "" && !slices.Contains([]string{DeliveryPending, DeliveryDelivered, DeliveryFailed, DeliveryRetrying}, status) {
		return nil, fault.Invalid("status", "must be one of: pending, delivered, failed, retrying")
	}
	r, err := s.webhook(ctx, p, id, false)
	if err != nil {
		return nil, err
	}
	total := r.NTotal
	switch status {
	case DeliveryPending:
		total = r.NPending
	case DeliveryDelivered:
		total = r.NDelivered
	case DeliveryFailed:
		total = r.NFailed
	case DeliveryRetrying:
		total = r.NRetrying
	}
	out := &DeliveryList{Data: []Delivery{}, Total: int(total)}
	// Compare pages, not offsets: (page-1)*limit overflows for a huge page.
	if total == 0 || page-1 >= (int(total)+limit-1)/limit {
		return out, nil
	}
	ds, err := s.St.Deliveries(ctx, r.OrgID, r.ID, status, page, limit)
	if err != nil {
		return nil, err
	}
	for i := range ds {
		out.Data = append(out.Data, *ds[i].view())
	}
	return out, nil
}

// Queued is the answer of test and retry: the new pending delivery.
type Queued struct {
	Message  string         `json:"message"`
	Delivery map[string]any `json:"delivery"`
}

// Test queues a test delivery through the whole pipeline (signature, URL
// checks, retries).
func (s *Service) Test(ctx context.Context, id string, in TestInput) (*Queued, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if err := p.RequireUnrestricted(); err != nil {
		return nil, err
	}
	r, err := s.webhook(ctx, p, id, false)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	typ := eventtype.Test
	if in.Event != nil {
		typ = *in.Event
		if !eventtype.Sendable(typ) {
			f.Add("event", "must be webhook.test or an event type of the catalogue")
		}
	}
	now := s.Clock.Now()
	data := in.Payload
	switch {
	case len(data) == 0 || string(data) == "null":
		data, _ = json.Marshal(map[string]string{"message": "This is a test webhook delivery",
			"timestamp": clock.Format(now), "webhookId": r.ID})
	case data[0] != '{':
		f.Add("payload", "must be a JSON object")
	case len(data) > MaxTestPayload:
		f.Addf("payload", "must be at most %d bytes", MaxTestPayload)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	body, err := json.Marshal(payload{ID: uuid.NewString(), Type: typ, Timestamp: clock.Format(now), OrgID: r.OrgID, Data: data})
	if err != nil {
		return nil, fault.Invalid("payload", "must be a JSON object")
	}
	var ev payload
	_ = json.Unmarshal(body, &ev)
	d := &Delivery{ID: newDeliveryID(now), WebhookID: r.ID, OrgID: r.OrgID, Status: DeliveryPending, Event: typ,
		EventID: ev.ID, Body: string(body), CreatedAt: clock.Format(now)}
	if err := s.queue(ctx, p, d, "webhook.test"); err != nil {
		return nil, err
	}
	return &Queued{Message: "Test webhook queued", Delivery: map[string]any{"id": d.ID, "webhookId": d.WebhookID,
		"status": d.Status, "event": d.Event, "attempt": 0}}, nil
}

// Retry queues a failed delivery again as a new pending delivery.
func (s *Service) Retry(ctx context.Context, id, deliveryID string) (*Queued, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if err := p.RequireUnrestricted(); err != nil {
		return nil, err
	}
	if err := valid.PathID("deliveryId", deliveryID); err != nil {
		return nil, err
	}
	r, err := s.webhook(ctx, p, id, false)
	if err != nil {
		return nil, err
	}
	old, err := s.St.Delivery(ctx, r.OrgID, r.ID, deliveryID)
	switch {
	case isNotFound(err):
		return nil, ErrDeliveryNotFound
	case err != nil:
		return nil, err
	case old.Status != DeliveryFailed:
		return nil, ErrOnlyFailed
	}
	now := s.Clock.Now()
	d := &Delivery{ID: newDeliveryID(now), WebhookID: r.ID, OrgID: r.OrgID, Status: DeliveryPending, Event: old.Event,
		EventID: old.EventID, Body: old.Body, CreatedAt: clock.Format(now), RetryOf: old.ID, OriginID: old.SentID()}
	if err := s.queue(ctx, p, d, "webhook.retry"); err != nil {
		return nil, err
	}
	return &Queued{Message: "Webhook delivery queued for retry", Delivery: map[string]any{"id": d.ID, "status": d.Status, "attempt": 0}}, nil
}

// queue creates a pending delivery (counted on its webhook, audited) and
// enqueues its first attempt. If the job cannot be sent the delivery is marked
// failed (so it can be retried) and the answer is 503.
func (s *Service) queue(ctx context.Context, p *authz.Principal, d *Delivery, action string) error {
	d.Keys = DeliveryKey(d.OrgID, d.WebhookID, d.ID)
	put, cnt := s.St.newDeliveryWrites(d, s.Clock.Now())
	tx := &store.Tx{}
	tx.Include(put)
	tx.Include(cnt)
	details := map[string]any{"deliveryId": d.ID, "event": d.Event}
	if d.RetryOf != "" {
		details["retryOf"] = d.RetryOf
	}
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: d.OrgID, Action: action, ResourceType: "webhook",
		ResourceID: d.WebhookID, Details: details}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		if isConflict(err) {
			return ErrNotFound // deleted meanwhile
		}
		return fmt.Errorf("queue delivery: %w", err)
	}
	return enqueue(ctx, s.St, s.Queue, s.DeliveryQueueURL, d)
}

// enqueue sends a new delivery's first job; when that fails it marks the
// delivery failed (retryable) and answers 503.
func enqueue(ctx context.Context, st Store, q Queue, url string, d *Delivery) error {
	err := q.Send(ctx, url, jobMessage(Job{OrgID: d.OrgID, WebhookID: d.WebhookID, DeliveryID: d.ID}, 0))
	if err == nil {
		return nil
	}
	dw, ww := unqueuedWrites(d)
	if cerr := st.St.Commit(ctx, (&store.Tx{}).Add(dw, ww)); cerr != nil {
		return fault.Unavailable(errors.Join(err, cerr), 5)
	}
	return fault.Unavailable(err, 5)
}

// ---- validation ------------------------------------------------------------

func checkSecret(f fault.Fields, s string) {
	n := utf8.RuneCountInString(s)
	switch {
	case n < 1 || n > MaxSecret:
		f.Addf("secret", "must be 1-%d characters", MaxSecret)
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		f.Add("secret", "must not contain control characters")
	}
}

// checkEvents requires at least one known event type; duplicates collapse.
func checkEvents(f fault.Fields, events []string) []string {
	if len(events) == 0 {
		f.Add("events", "must list at least one event type")
		return nil
	}
	out := []string{}
	for i, e := range events {
		if !eventtype.Known(e) {
			f.Add(fmt.Sprintf("events.%d", i), "is not a known event type")
			continue
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// reservedHeaders may not be set by custom headers (nor may any x-service-*).
var reservedHeaders = []string{"accept-encoding", "connection", "content-length", "content-type", "host", "keep-alive",
	"proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "user-agent"}

// checkHeaders validates custom headers. A value sent back as the mask keeps
// the stored value of the same header (stored is nil on create).
func checkHeaders(f fault.Fields, hs []Header, stored []Header) []Header {
	if len(hs) > MaxHeaders {
		f.Addf("headers", "must have at most %d entries", MaxHeaders)
		return nil
	}
	seen := map[string]bool{}
	out := []Header{}
	for i, h := range hs {
		path := fmt.Sprintf("headers.%d", i)
		lower := strings.ToLower(h.Key)
		switch {
		case !token(h.Key) || len(h.Key) > 256:
			f.Add(path+".key", "must be a valid HTTP header name")
			continue
		case slices.Contains(reservedHeaders, lower) || strings.HasPrefix(lower, "x-service-"):
			f.Add(path+".key", "is a reserved header name")
			continue
		case seen[lower]:
			f.Add(path+".key", "appears more than once")
			continue
		}
		seen[lower] = true
		v := h.Value
		if v == MaskedValue {
			j := slices.IndexFunc(stored, func(s Header) bool { return strings.EqualFold(s.Key, h.Key) })
			if j < 0 {
				f.Add(path+".value", "is masked; send the real value")
				continue
			}
			v = stored[j].Value
		}
		switch {
		case len(v) > MaxHeader:
			f.Addf(path+".value", "must be at most %d bytes", MaxHeader)
			continue
		case !fieldValue(v):
			f.Add(path+".value", "must not contain control characters or line breaks")
			continue
		}
		out = append(out, Header{Key: h.Key, Value: v})
	}
	return out
}

// token reports whether s is an HTTP token (RFC 9110 tchar).
func token(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// fieldValue reports whether s may be a header value: no control characters
// but tab.
func fieldValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return utf8.ValidString(s)
}

// checkPolicy validates a retry policy; omitted fields take the default.
func checkPolicy(f fault.Fields, in *PolicyInput) *RetryPolicy {
	if in == nil {
		return nil
	}
	p := DefaultRetry
	if in.MaxRetries != nil {
		p.MaxRetries = *in.MaxRetries
		valid.Range(f, "retryPolicy.maxRetries", p.MaxRetries, 0, 10)
	}
	if in.InitialDelayMs != nil {
		p.InitialDelayMs = *in.InitialDelayMs
		valid.Range(f, "retryPolicy.initialDelayMs", p.InitialDelayMs, 100, 60_000)
	}
	if in.BackoffMultiplier != nil {
		p.BackoffMultiplier = *in.BackoffMultiplier
		if p.BackoffMultiplier < 1 || p.BackoffMultiplier > 10 {
			f.Add("retryPolicy.backoffMultiplier", "must be between 1 and 10")
		}
	}
	if in.MaxDelayMs != nil {
		p.MaxDelayMs = *in.MaxDelayMs
		valid.Range(f, "retryPolicy.maxDelayMs", p.MaxDelayMs, 1000, 900_000)
	}
	return &p
}

// ---- views and sealing ---------------------------------------------------

func (s *Service) seal(id, field string, v []byte) (string, error) {
	out, err := s.Box.Seal(v, sealContext(id, field))
	if err != nil {
		return "", fmt.Errorf("seal webhook %s %s: %w", id, field, err)
	}
	return out, nil
}

func (s *Service) sealHeaders(id string, hs []Header) (string, error) {
	if len(hs) == 0 {
		return "", nil
	}
	raw, err := json.Marshal(hs)
	if err != nil {
		return "", err
	}
	return s.seal(id, "headers", raw)
}

// view is the API form: URL masked, header values masked, hasSecret.
func (s *Service) view(r *record) (*Webhook, error) {
	h, err := openRecord(s.Box, r)
	if err != nil {
		return nil, err
	}
	headers := make([]Header, len(h.headers))
	for i, hd := range h.headers {
		headers[i] = Header{Key: hd.Key, Value: MaskedValue}
	}
	events := r.Events
	if events == nil {
		events = []string{}
	}
	return &Webhook{ID: r.ID, OrgID: r.OrgID, Name: r.Name, URL: maskURL(h.url), HasSecret: r.Secret != "",
		Events: events, Headers: headers, Status: r.Status, RetryPolicy: r.RetryPolicy,
		SuccessCount: r.SuccessCount, FailureCount: r.FailureCount, LastDeliveryAt: optional(r.LastDeliveryAt),
		LastSuccessAt: optional(r.LastSuccessAt), CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, nil
}

// maskURL strips a URL's userinfo, query and fragment.
func maskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
