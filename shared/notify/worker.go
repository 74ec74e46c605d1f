package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
)

// Sender delivers messages (awsnotify.Notifier: SES and SNS).
type Sender interface {
	SendEmail(ctx context.Context, e Email) error
	SendSMS(ctx context.Context, phone, text string) error
}

// Push is one mobile push notification.
type Push struct {
	Platform string // apns or fcm
	Token    string
	Title    string
	Text     string
	Data     map[string]string
}

// PushSender delivers push notifications (awsnotify.Notifier: SNS mobile push).
type PushSender interface {
	SendPush(ctx context.Context, p Push) error
}

// Worker is the mailer: it delivers each message of a mail-queue batch.
type Worker struct {
	Send Sender
	// Push delivers KindPush messages; nil drops them (logged).
	Push PushSender
	// Reset handles a KindPasswordReset message (signin.Service.SendPasswordReset).
	Reset func(ctx context.Context, m Message) error
	Log   *slog.Logger
}

// Handle delivers a batch and reports the messages that failed, which SQS
// retries and, past the queue's receive limit, moves to its dead-letter queue.
// A message that cannot be decoded is dropped (logged): retrying cannot fix it.
func (w *Worker) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var res events.SQSEventResponse
	for _, rec := range ev.Records {
		if err := w.handle(ctx, rec.Body); err != nil {
			w.Log.ErrorContext(ctx, "mail not delivered", "messageId", rec.MessageId, "err", err)
			res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		}
	}
	return res, nil
}

func (w *Worker) handle(ctx context.Context, body string) error {
	var m Message
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.To == "" {
		w.Log.ErrorContext(ctx, "mail message dropped: not a message", "err", err)
		return nil
	}
	switch m.Kind {
	case KindEmail:
		return w.Send.SendEmail(ctx, Email{To: m.To, Subject: m.Subject, Text: m.Text})
	case KindSMS:
		return w.Send.SendSMS(ctx, m.To, m.Text)
	case KindPush:
		if w.Push == nil {
			w.Log.ErrorContext(ctx, "push message dropped: no push sender")
			return nil
		}
		return w.Push.SendPush(ctx, Push{Platform: m.Platform, Token: m.To, Title: m.Subject, Text: m.Text, Data: m.Data})
	case KindPasswordReset:
		if w.Reset == nil {
			return fmt.Errorf("notify: no password-reset handler")
		}
		return w.Reset(ctx, m)
	default:
		w.Log.ErrorContext(ctx, "mail message dropped: unknown kind", "kind", m.Kind)
		return nil
	}
}
