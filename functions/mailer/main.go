// Command mailer is the mailer Lambda function: it delivers the mail queue.
package main

import "github.com/gale-rmm/gale/shared/app/mailergroup"

func main() { mailergroup.Run() }
