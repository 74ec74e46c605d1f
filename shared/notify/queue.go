package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Kinds of Message.
const (
	KindEmail = "email"
	KindSMS   = "sms"
	// KindPasswordReset asks the mailer to issue a reset link for To, if an
	// active account has that address. The request only enqueues it, so a known
	// and an unknown address cost the request the same work.
	KindPasswordReset = "password-reset"
)

// Message is one job of the mail queue.
type Message struct {
	Kind    string `json:"kind"`
	To      string `json:"to"` // an e-mail address, or a phone number (KindSMS)
	Subject string `json:"subject,omitempty"`
	Text    string `json:"text,omitempty"`
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

// SendEmail enqueues e.
func (q Queue) SendEmail(ctx context.Context, e Email) error {
	return q.Enqueue(ctx, Message{Kind: KindEmail, To: e.To, Subject: e.Subject, Text: e.Text})
}

// SendSMS enqueues a text message to phone.
func (q Queue) SendSMS(ctx context.Context, phone, text string) error {
	return q.Enqueue(ctx, Message{Kind: KindSMS, To: phone, Text: text})
}
