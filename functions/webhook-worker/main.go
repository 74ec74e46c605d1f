// Command webhook-worker is the webhook-worker Lambda function.
package main

import "github.com/gale-rmm/gale/shared/app/webhookworkergroup"

func main() { webhookworkergroup.RunWorker() }
