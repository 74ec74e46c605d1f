package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/store"
)

// DLQ inspects and redrives the deliveries' dead-letter queue: jobs whose
// retries ran out (sent there by the worker) and poison messages (moved there
// by the queue's redrive policy). System scope only.
type DLQ struct {
	St    Store
	SQS   *sqs.Client
	Queue Queue
	Clock clock.Clock
	// URL is the dead-letter queue; DeliveryQueueURL where redriven jobs go.
	URL              string
	DeliveryQueueURL string
}

// DLQEntry is one sampled dead-letter message.
type DLQEntry struct {
	MessageID  string  `json:"messageId"`
	OrgID      *string `json:"orgId"`
	WebhookID  *string `json:"webhookId"`
	DeliveryID *string `json:"deliveryId"`
	Attempt    *int    `json:"attempt"`
	Reason     *string `json:"reason"`
	FailedAt   *string `json:"failedAt"`
	// ReceiveCount is how often the message has been received (SQS).
	ReceiveCount int `json:"receiveCount"`
}

// DLQView is GET /admin/webhook-dlq's answer.
type DLQView struct {
	Count  int        `json:"count"`
	Sample []DLQEntry `json:"sample"`
}

// RedriveResult is POST /admin/webhook-dlq/redrive's answer.
type RedriveResult struct {
	Redriven int `json:"redriven"`
	// Dropped counts jobs whose delivery or webhook no longer exists (removed).
	Dropped int `json:"dropped"`
	// Unreadable counts messages that are not delivery jobs (left in the queue).
	Unreadable int `json:"unreadable"`
	Remaining  int `json:"remaining"`
}

// MaxRedrive bounds one redrive call.
const MaxRedrive = 1000

// authorize admits system-scope users holding perm.
func (q *DLQ) authorize(ctx context.Context, perm authz.Permission) (*authz.Principal, error) {
	p, err := authz.Require(ctx, perm)
	if err != nil {
		return nil, err
	}
	if err := p.UserSession(); err != nil {
		return nil, err
	}
	if p.Scope != authz.ScopeSystem {
		return nil, ErrSystemOnly
	}
	return p, nil
}

// count reads the queue's approximate depth (visible and in flight).
func (q *DLQ) count(ctx context.Context) (int, error) {
	out, err := q.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.URL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		return 0, fmt.Errorf("webhook dlq: attributes: %w", err)
	}
	n, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	m, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return n + m, nil
}

// Inspect returns the queue's depth and up to limit (1-10) messages, which stay
// in the queue (received with a zero visibility timeout).
func (q *DLQ) Inspect(ctx context.Context, limit int) (*DLQView, error) {
	if _, err := q.authorize(ctx, authz.OrgsRead); err != nil {
		return nil, err
	}
	n, err := q.count(ctx)
	if err != nil {
		return nil, err
	}
	out, err := q.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL),
		MaxNumberOfMessages:         int32(limit),
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameApproximateReceiveCount}})
	if err != nil {
		return nil, fmt.Errorf("webhook dlq: receive: %w", err)
	}
	v := &DLQView{Count: max(n, len(out.Messages)), Sample: []DLQEntry{}}
	if err := q.release(ctx, out.Messages); err != nil {
		return nil, err
	}
	for _, m := range out.Messages {
		e := DLQEntry{MessageID: aws.ToString(m.MessageId)}
		e.ReceiveCount, _ = strconv.Atoi(m.Attributes[string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount)])
		var j Job
		if json.Unmarshal([]byte(aws.ToString(m.Body)), &j) == nil && j.DeliveryID != "" {
			e.OrgID, e.WebhookID, e.DeliveryID, e.Attempt = &j.OrgID, &j.WebhookID, &j.DeliveryID, &j.Attempt
			e.Reason, e.FailedAt = optional(j.Reason), optional(j.FailedAt)
		}
		v.Sample = append(v.Sample, e)
	}
	return v, nil
}

// release makes sampled messages visible again at once (a receive without a
// visibility timeout takes the queue's default).
func (q *DLQ) release(ctx context.Context, ms []sqstypes.Message) error {
	if len(ms) == 0 {
		return nil
	}
	in := &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(q.URL)}
	for i, m := range ms {
		in.Entries = append(in.Entries, sqstypes.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(i)),
			ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
	}
	if _, err := q.SQS.ChangeMessageVisibilityBatch(ctx, in); err != nil {
		return fmt.Errorf("webhook dlq: release sample: %w", err)
	}
	return nil
}

// Redrive moves up to limit jobs back: each becomes a new pending delivery of
// the same event and payload (counted on its webhook) with its job on the
// deliveries queue, and only then leaves the dead-letter queue. Jobs whose
// delivery or webhook is gone are removed; messages that are not jobs stay.
func (q *DLQ) Redrive(ctx context.Context, limit int) (*RedriveResult, error) {
	p, err := q.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	res := &RedriveResult{}
	for res.Redriven+res.Dropped+res.Unreadable < limit {
		out, err := q.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL),
			MaxNumberOfMessages: int32(min(10, limit-res.Redriven-res.Dropped-res.Unreadable)), VisibilityTimeout: 60})
		if err != nil {
			return nil, fmt.Errorf("webhook dlq: receive: %w", err)
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			var j Job
			if json.Unmarshal([]byte(aws.ToString(m.Body)), &j) != nil || j.DeliveryID == "" || j.OrgID == "" || j.WebhookID == "" {
				res.Unreadable++
				continue
			}
			moved, err := q.redriveOne(ctx, p, j)
			if err != nil {
				return nil, err
			}
			if moved {
				res.Redriven++
			} else {
				res.Dropped++
			}
			if _, err := q.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return nil, fmt.Errorf("webhook dlq: delete: %w", err)
			}
		}
	}
	if res.Remaining, err = q.count(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

func (q *DLQ) redriveOne(ctx context.Context, p *authz.Principal, j Job) (bool, error) {
	old, err := q.St.Delivery(ctx, j.OrgID, j.WebhookID, j.DeliveryID)
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	now := q.Clock.Now()
	d := &Delivery{ID: newDeliveryID(now), WebhookID: old.WebhookID, OrgID: old.OrgID, Status: DeliveryPending,
		Event: old.Event, EventID: old.EventID, Body: old.Body, CreatedAt: clock.Format(now), RetryOf: old.ID, OriginID: old.SentID()}
	d.Keys = DeliveryKey(d.OrgID, d.WebhookID, d.ID)
	put, cnt := q.St.newDeliveryWrites(d, now)
	tx := (&store.Tx{}).Add(put, cnt, audit.Put(q.Clock, audit.Entry{Actor: p.Actor(), OrgID: d.OrgID,
		Action: "webhook.redrive", ResourceType: "webhook", ResourceID: d.WebhookID,
		Details: map[string]any{"deliveryId": d.ID, "retryOf": old.ID}}))
	if err := q.St.St.Commit(ctx, tx); err != nil {
		if isConflict(err) {
			return false, nil // webhook deleted
		}
		return false, fmt.Errorf("webhook dlq: redrive %s: %w", old.ID, err)
	}
	if err := enqueue(ctx, q.St, q.Queue, q.DeliveryQueueURL, d); err != nil {
		return false, err
	}
	return true, nil
}

// AdminHandler serves the dead-letter queue routes at /api/v1/admin and /admin.
//
//	route                              MFA  what
//	GET  /admin/webhook-dlq                 GetQueueAttributes; ReceiveMessage (visibility 0)
//	POST /admin/webhook-dlq/redrive    yes  delivery GetItem; transaction; SendMessage, DeleteMessage (and receives)
type AdminHandler struct{ DLQ *DLQ }

// Routes registers the DLQ routes, at /api/v1/admin and at the /admin alias.
func (h *AdminHandler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/admin/webhook-dlq", Access: httpapi.User, Handle: h.inspect},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/admin/webhook-dlq/redrive", Access: httpapi.User, MFA: true, Handle: h.redrive},
		httpapi.Route{Method: http.MethodGet, Path: "/admin/webhook-dlq", Access: httpapi.User, Handle: h.inspect},
		httpapi.Route{Method: http.MethodPost, Path: "/admin/webhook-dlq/redrive", Access: httpapi.User, MFA: true, Handle: h.redrive},
	)
}

func (h *AdminHandler) inspect(w http.ResponseWriter, r *http.Request) error {
	limit := 10
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10 {
			return fault.Invalid("limit", "must be a whole number from 1 to 10")
		}
		limit = n
	}
	v, err := h.DLQ.Inspect(r.Context(), limit)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

// RedriveInput is the optional redrive body.
type RedriveInput struct {
	Limit *int `json:"limit"`
}

func (h *AdminHandler) redrive(w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadJSON(r, httpapi.MaxBody)
	if err != nil {
		return err
	}
	var in RedriveInput
	if len(body) > 0 {
		if err := httpapi.DecodeBytes(body, &in); err != nil {
			return err
		}
	}
	limit := 100
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxRedrive {
			return fault.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxRedrive))
		}
		limit = *in.Limit
	}
	res, err := h.DLQ.Redrive(r.Context(), limit)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
	return nil
}
