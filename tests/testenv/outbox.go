package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/shared/notify"
)

// Email is a message moto's SES recorded.
type Email struct {
	To      []string
	Subject string
	Body    string
}

// SMS is a text message moto's SNS recorded.
type SMS struct {
	Phone   string
	Message string
}

type motoData struct {
	SES struct {
		Message []struct {
			Body         string `json:"body"`
			Subject      string `json:"subject"`
			Destinations struct {
				ToAddresses []string `json:"ToAddresses"`
			} `json:"destinations"`
		} `json:"Message"`
	} `json:"ses"`
	SNS struct {
		SMS []struct {
			Message string `json:"message"`
			Phone   string `json:"phone_number"`
		} `json:"SMS"`
	} `json:"sns"`
}

// readMoto reads what moto recorded. moto serialises its state without a lock, so
// a dump taken while other tests write can fail (a 500 page); it is retried.
func readMoto(t testing.TB) motoData {
	t.Helper()
	var last error
	for attempt := 0; attempt < 10; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
		}
		d, err := fetchMoto()
		if err == nil {
			return d
		}
		last = err
	}
	t.Fatalf("testenv: read moto data: %v", last)
	return motoData{}
}

func fetchMoto() (motoData, error) {
	var d motoData
	res, err := http.Get(os.Getenv("AWS_ENDPOINT_URL") + "/moto-api/data.json?service=ses&service=sns")
	if err != nil {
		return d, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return d, fmt.Errorf("status %d", res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(&d); err != nil {
		return d, fmt.Errorf("decode: %w", err)
	}
	return d, nil
}

// mailers are the mail queues of this process's live environments and their
// mailers; deliverMail runs them, as the mailer function does in AWS.
var (
	mailMu  sync.Mutex
	mailers = map[*mailer]bool{}
)

type mailer struct {
	sqs    *sqs.Client
	url    string
	worker *notify.Worker
}

func registerMailer(t testing.TB, q *sqs.Client, url string, w *notify.Worker) *mailer {
	m := &mailer{sqs: q, url: url, worker: w}
	mailMu.Lock()
	mailers[m] = true
	mailMu.Unlock()
	t.Cleanup(func() {
		mailMu.Lock()
		delete(mailers, m)
		mailMu.Unlock()
	})
	return m
}

// UseMailer makes w deliver e's mail queue (a test that records what is sent).
func (e *Env) UseMailer(w *notify.Worker) {
	mailMu.Lock()
	defer mailMu.Unlock()
	e.mail.worker = w
}

// DeliverMail runs e's mailer over what e's mail queue holds.
func (e *Env) DeliverMail(t testing.TB) {
	t.Helper()
	mailMu.Lock()
	defer mailMu.Unlock()
	e.mail.deliver(t)
}

// deliverMail empties every registered mail queue through its mailer. It holds
// one lock throughout, so a test that reads what was sent after its request
// never races another test's delivery of its message.
func deliverMail(t testing.TB) {
	t.Helper()
	mailMu.Lock()
	defer mailMu.Unlock()
	for m := range mailers {
		m.deliver(t)
	}
}

// deliver empties m's queue through its worker (mailMu held).
func (m *mailer) deliver(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	for {
		msgs := Receive(t, m.sqs, m.url, 0)
		if len(msgs) == 0 {
			break
		}
		ev := events.SQSEvent{}
		for _, msg := range msgs {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(msg.MessageId), Body: aws.ToString(msg.Body)})
		}
		res, err := m.worker.Handle(ctx, ev)
		if err != nil || len(res.BatchItemFailures) > 0 {
			t.Fatalf("testenv: the mailer failed: %v %+v", err, res.BatchItemFailures)
		}
		for _, msg := range msgs {
			if _, err := m.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(m.url), ReceiptHandle: msg.ReceiptHandle}); err != nil {
				t.Fatalf("testenv: delete mail: %v", err)
			}
		}
	}
}

// SentEmails returns what SES sent to address, oldest first, after the mailer
// delivered what the mail queues held. The emulator is shared by parallel
// packages, so tests use addresses of their own.
func SentEmails(t testing.TB, address string) []Email {
	t.Helper()
	deliverMail(t)
	var out []Email
	seen := map[string]bool{}
	for _, m := range readMoto(t).SES.Message {
		for _, to := range m.Destinations.ToAddresses {
			if to == address {
				// Mail is delivered at least once (shared/notify): a send
				// whose answer came after the SDK's response timeout is
				// retried and recorded twice, most often on a loaded machine
				// (TestResendRevokesPreviousToken saw an invitation twice).
				// A repeat is the same message; it counts once.
				if k := strings.Join(m.Destinations.ToAddresses, ",") + "\x00" + m.Subject + "\x00" + m.Body; !seen[k] {
					seen[k] = true
					out = append(out, Email{To: m.Destinations.ToAddresses, Subject: m.Subject, Body: m.Body})
				}
				break
			}
		}
	}
	return out
}

// SentSMS returns what SNS sent to phone, oldest first, after the mailer
// delivered what the mail queues held.
func SentSMS(t testing.TB, phone string) []SMS {
	t.Helper()
	deliverMail(t)
	var out []SMS
	seen := map[string]bool{}
	for _, m := range readMoto(t).SNS.SMS {
		if m.Phone == phone && !seen[m.Message] { // a repeat counts once, as for SentEmails
			seen[m.Message] = true
			out = append(out, SMS{Phone: m.Phone, Message: m.Message})
		}
	}
	return out
}
