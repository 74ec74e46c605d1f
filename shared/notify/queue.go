package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Kinds of Message.
const (
	KindEmail = "email"
	KindSMS   = "sms"
	// KindPasswordReset asks the mailer to issue a reset link for To, if an
	// active account has that address. The request only enqueues it, so a known
	// and an unknown address cost the request the same work.
	KindPasswordReset = "password-reset"
	// KindPush is a mobile push notification to one target (To is the
	// device token, Platform apns or fcm).
	KindPush = "push"
)

// Message is one job of the mail queue.
type Message struct {
	Kind    string `json:"kind"`
	To      string `json:"to"` // an e-mail address, or a phone number (KindSMS)
	Subject string `json:"subject,omitempty"`
	Text    string `json:"text,omitempty"`
	// Platform and Data belong to KindPush: the target's platform and the
	// key-value data the mobile app reads.
	Platform string            `json:"platform,omitempty"`
	Data     map[string]string `json:"data,omitempty"`
	// IP, SourceIP and UserAgent describe the requester (audit of a reset).
	IP        string `json:"ip,omitempty"`
	SourceIP  string `json:"sourceIp,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
}

// Queue enqueues messages for the mailer: the only function that links SES and
// SNS. A send costs the request one SQS call, whatever the message; the queue
// is encrypted at rest (links in messages are secrets until used).
type Queue struct {
	SQS *sqs.Client
	URL string
}

// ErrNoQueue is the answer of a Queue without a URL (MAIL_QUEUE_URL unset).
var ErrNoQueue = errors.New("notify: no mail queue configured (MAIL_QUEUE_URL)")

// Enqueue sends m to the mail queue.
func (q Queue) Enqueue(ctx context.Context, m Message) error {
	if q.URL == "" || q.SQS == nil {
		return ErrNoQueue
	}
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := q.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(string(body))}); err != nil {
		return fmt.Errorf("notify: enqueue %s: %w", m.Kind, err)
	}
	return nil
}

// EnqueueAll sends ms to the mail queue, ten to a SendMessageBatch call. It
// returns the first error; the messages of the batches that succeeded are sent.
func (q Queue) EnqueueAll(ctx context.Context, ms []Message) error {
	if q.URL == "" || q.SQS == nil {
		return ErrNoQueue
	}
	var first error
	for start := 0; start < len(ms); start += 10 {
		batch := ms[start:min(start+10, len(ms))]
		entries := make([]sqstypes.SendMessageBatchRequestEntry, 0, len(batch))
		for i, m := range batch {
			body, err := json.Marshal(m)
			if err != nil {
				return err
			}
			entries = append(entries, sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(body))})
		}
		out, err := q.SQS.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: entries})
		if err == nil && len(out.Failed) > 0 {
			err = fmt.Errorf("%d of %d refused (%s)", len(out.Failed), len(entries), aws.ToString(out.Failed[0].Code))
		}
		if err != nil && first == nil {
			first = fmt.Errorf("notify: enqueue %d messages: %w", len(entries), err)
		}
	}
	return first
}

// SendEmail enqueues e.
func (q Queue) SendEmail(ctx context.Context, e Email) error {
	return q.Enqueue(ctx, Message{Kind: KindEmail, To: e.To, Subject: e.Subject, Text: e.Text})
}

// SendSMS enqueues a text message to phone.
func (q Queue) SendSMS(ctx context.Context, phone, text string) error {
	return q.Enqueue(ctx, Message{Kind: KindSMS, To: phone, Text: text})
}
