// Package notify is what the domains know of outbound messages. Request
// handlers never call SES or SNS: they enqueue a Message on the mail queue
// (Queue, one SQS call), and the mailer function (Worker, wired by
// shared/app/mailergroup) delivers it through notify/awsnotify, the only package
// that links the SES and SNS clients. A request's time so never depends on
// whether, or to whom, mail goes: forgot-password enqueues a KindPasswordReset
// job for any address, and the mailer looks the account up. Mobile push
// notifications (KindPush, the PAM approval requests of shared/push) take the
// same queue and are delivered through SNS mobile push.
package notify

// Email is one plain-text message.
type Email struct {
	To      string
	Subject string
	Text    string
}
