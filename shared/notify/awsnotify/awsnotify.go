// Package awsnotify sends e-mail through SES v2, SMS through SNS and mobile
// push through SNS platform endpoints (one per token, created on first use:
// CreatePlatformEndpoint is idempotent for a token, then Publish to it). The local
// runtime also echoes each message to the console so a person can follow links
// and read codes; the deployed stack never sets Echo. Only the functions that
// send mail or SMS link it (and so the SES and SNS clients).
package awsnotify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	// APNSApp and FCMApp are the SNS platform application ARNs of mobile push
	// (PUSH_APNS_APP_ARN, PUSH_FCM_APP_ARN); a platform without one drops its
	// messages (logged by SendPush's error-free return).
	APNSApp, FCMApp string
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

// ErrPushNotConfigured answers a push to a platform that has no SNS platform
// application configured.
var ErrPushNotConfigured = errors.New("awsnotify: no SNS platform application for the platform")

// SendPush sends p to its device through the platform application of its
// platform. A disabled endpoint (the token is no longer valid) and a platform
// with no application are dropped, not retried: retrying cannot fix them.
func (n *Notifier) SendPush(ctx context.Context, p notify.Push) error {
	app := ""
	switch p.Platform {
	case "apns":
		app = n.APNSApp
	case "fcm":
		app = n.FCMApp
	}
	if app == "" {
		n.echo("push (%s, not configured) %s: %s", p.Platform, p.Title, p.Text)
		slog.ErrorContext(ctx, "push dropped", "platform", p.Platform, "err", ErrPushNotConfigured)
		return nil
	}
	ep, err := n.SNS.CreatePlatformEndpoint(ctx, &sns.CreatePlatformEndpointInput{PlatformApplicationArn: aws.String(app), Token: aws.String(p.Token)})
	if err != nil {
		return fmt.Errorf("push endpoint: %w", err)
	}
	msg, err := pushMessage(p)
	if err != nil {
		return err
	}
	_, err = n.SNS.Publish(ctx, &sns.PublishInput{TargetArn: ep.EndpointArn, MessageStructure: aws.String("json"), Message: aws.String(msg)})
	var disabled *snstypes.EndpointDisabledException
	if errors.As(err, &disabled) {
		slog.WarnContext(ctx, "push dropped: endpoint disabled", "platform", p.Platform)
		return nil
	}
	if err != nil {
		return fmt.Errorf("send push: %w", err)
	}
	n.echo("push (%s): %s\n%s", p.Platform, p.Title, p.Text)
	return nil
}

// pushMessage is the SNS JSON message of p: a default text and the APNs and
// FCM payloads, each carrying p.Data beside the visible alert.
func pushMessage(p notify.Push) (string, error) {
	aps := map[string]any{"aps": map[string]any{"alert": map[string]string{"title": p.Title, "body": p.Text}, "sound": "default"}}
	for k, v := range p.Data {
		aps[k] = v
	}
	apns, err := json.Marshal(aps)
	if err != nil {
		return "", err
	}
	gcm, err := json.Marshal(map[string]any{"notification": map[string]string{"title": p.Title, "body": p.Text}, "data": p.Data})
	if err != nil {
		return "", err
	}
	out, err := json.Marshal(map[string]string{"default": p.Text, "APNS": string(apns), "APNS_SANDBOX": string(apns), "GCM": string(gcm)})
	return string(out), err
}
