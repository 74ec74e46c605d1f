// Package awsnotify sends e-mail through SES v2 and SMS through SNS. The local
// runtime also echoes each message to the console so a person can follow links
// and read codes; the deployed stack never sets Echo. Only the functions that
// send mail or SMS link it (and so the SES and SNS clients).
package awsnotify

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/gale-rmm/gale/shared/notify"
)

// New builds a notifier on cfg's SES and SNS clients, sending from from.
func New(cfg aws.Config, from string) *Notifier {
	return &Notifier{SES: sesv2.NewFromConfig(cfg), SNS: sns.NewFromConfig(cfg), From: from}
}

// Notifier sends messages.
type Notifier struct {
	SES  *sesv2.Client
	SNS  *sns.Client
	From string
	// Echo, when set, receives a copy of every message (local runs only).
	Echo io.Writer
	mu   sync.Mutex
}

// SendEmail sends e through SES.
func (n *Notifier) SendEmail(ctx context.Context, e notify.Email) error {
	_, err := n.SES.SendEmail(ctx, &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(n.From),
		Destination:      &sestypes.Destination{ToAddresses: []string{e.To}},
		Content: &sestypes.EmailContent{Simple: &sestypes.Message{
			Subject: &sestypes.Content{Data: aws.String(e.Subject), Charset: aws.String("UTF-8")},
			Body:    &sestypes.Body{Text: &sestypes.Content{Data: aws.String(e.Text), Charset: aws.String("UTF-8")}},
		}},
	})
	if err != nil {
		return fmt.Errorf("send e-mail %q: %w", e.Subject, err)
	}
	n.echo("e-mail to %s: %s\n%s", e.To, e.Subject, e.Text)
	return nil
}

// SendSMS sends a transactional text message through SNS.
func (n *Notifier) SendSMS(ctx context.Context, phone, text string) error {
	_, err := n.SNS.Publish(ctx, &sns.PublishInput{
		PhoneNumber: aws.String(phone),
		Message:     aws.String(text),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{
			"AWS.SNS.SMS.SMSType": {DataType: aws.String("String"), StringValue: aws.String("Transactional")},
		},
	})
	if err != nil {
		return fmt.Errorf("send sms: %w", err)
	}
	n.echo("SMS to %s: %s", phone, text)
	return nil
}

func (n *Notifier) echo(format string, args ...any) {
	if n.Echo == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(n.Echo, "\n----- %s\n-----\n", strings.TrimSpace(msg))
}

// VerifySender registers the From identity (emulators require it; in AWS the
// identity is verified out of band and this is not called).
func (n *Notifier) VerifySender(ctx context.Context) error {
	_, err := n.SES.CreateEmailIdentity(ctx, &sesv2.CreateEmailIdentityInput{EmailIdentity: aws.String(n.From)})
	if err != nil && !strings.Contains(err.Error(), "AlreadyExists") {
		return fmt.Errorf("verify sender %s: %w", n.From, err)
	}
	return nil
}
