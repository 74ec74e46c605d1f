package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Receive takes up to ten messages of queue url (long-polling wait seconds,
// with their system attributes) and answers none only once the queue holds
// none. A receive whose answer was lost, which the SDK then retries, hides
// the messages it took from the retry, which finds the queue empty: a drain
// that stopped there left a reset mail unsent (run20) and, in the fault
// pass, webhook deliveries pending that were never attempted. So messages
// are held for a second only, and an empty answer counts only once nothing
// is in flight (waiting at most 10 s for a lost receive's hold to end).
// Callers delete what they took before they receive again.
func Receive(t testing.TB, c *sqs.Client, url string, wait int32) []sqstypes.Message {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
			VisibilityTimeout: 1, WaitTimeSeconds: wait,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatalf("testenv: receive from %s: %v", url, err)
		}
		if len(out.Messages) > 0 || !inFlight(t, c, url) {
			return out.Messages
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: %s: messages still in flight after 10 s", url)
		}
		time.Sleep(200 * time.Millisecond) // until the lost receive's hold ends
	}
}

// inFlight reports messages of queue url that a receive holds.
func inFlight(t testing.TB, c *sqs.Client, url string) bool {
	t.Helper()
	name := sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible
	out, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{name}})
	if err != nil {
		t.Fatalf("testenv: attributes of %s: %v", url, err)
	}
	return out.Attributes[string(name)] != "0"
}
