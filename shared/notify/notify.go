// Package notify is what the domains know of outbound messages: the e-mail
// they send. The SES and SNS senders live in notify/awsnotify, linked only by
// the functions that send mail or SMS.
package notify

// Email is one plain-text message.
type Email struct {
	To      string
	Subject string
	Text    string
}
