// Package notify is what the domains know of outbound messages. Request
// handlers never call SES or SNS: they enqueue a Message on the mail queue
// (Queue, one SQS call), and the mailer function (Worker, wired by
// shared/app/mailergroup) delivers it through notify/awsnotify, the only package
// that links the SES and SNS clients. A request's time so never depends on
// whether, or to whom, mail goes: forgot-password enqueues a KindPasswordReset
// job for any address, and the mailer looks the account up. Mobile push
// notifications (KindPush, the PAM approval requests of shared/push) take the
// same queue and are delivered through SNS mobile push.
//
// Delivery is at least once: the queue may hand a message over twice, and an
// SES or SNS send whose answer comes late is retried by the SDK (SES and SNS
// take no idempotency key), so a recipient may get the same message twice.
// Nothing breaks when one is repeated: an invitation or a code sent twice is
// the same invitation or code, and a password-reset job run twice issues a
// second link that replaces the first (one pending reset per user).
package notify

// Email is one plain-text message.
type Email struct {
	To      string
	Subject string
	Text    string
}
