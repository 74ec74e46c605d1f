// Package mailergroup wires the mailer function: the consumer of the mail queue
// and the only function that links the SES and SNS clients (notify/awsnotify)
// and sends what the request handlers enqueued (notify.Queue).
package mailergroup

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/signingroup"
	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/notify/awsnotify"
)

// Notifier builds the SES and SNS sender.
func Notifier(d *app.Deps) *awsnotify.Notifier {
	n := awsnotify.New(d.AWS, d.Cfg.EmailFrom)
	n.APNSApp, n.FCMApp = d.Cfg.PushAPNSAppARN, d.Cfg.PushFCMAppARN
	return n
}

// Worker builds the mailer over n (Notifier, or a recorder around it in
// tests; a sender that also delivers push, as Notifier does, takes the
// push messages too). Password-reset jobs are finished by the sign-in service, which
// e-mails the link through n itself.
func Worker(d *app.Deps, n notify.Sender) *notify.Worker {
	signIn := signingroup.SignIn(d)
	signIn.Mail = n
	w := &notify.Worker{Send: n, Reset: signIn.SendPasswordReset, Log: d.Log}
	if p, ok := n.(notify.PushSender); ok {
		w.Push = p
	}
	return w
}

// Run starts the mailer Lambda.
func Run() {
	d := app.Start()
	lambda.Start(Worker(d, Notifier(d)).Handle)
}
