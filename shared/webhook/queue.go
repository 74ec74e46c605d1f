package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gale-rmm/gale/shared/outbound"
)

// Message is one queue message; DelaySeconds is SQS's per-message delay (0-900).
type Message struct {
	Body         string
	DelaySeconds int32
}

// Queue sends messages. SQSQueue is the production one; tests wrap it to record
// the delays asked for and scale them.
type Queue interface {
	Send(ctx context.Context, queueURL string, msgs ...Message) error
}

// SQSQueue sends with SendMessage (one message) or SendMessageBatch (ten per call).
type SQSQueue struct{ SQS *sqs.Client }

// Send sends msgs, failing when any entry fails.
func (q SQSQueue) Send(ctx context.Context, queueURL string, msgs ...Message) error {
	if queueURL == "" {
		return fmt.Errorf("webhook: no queue configured")
	}
	if len(msgs) == 1 {
		_, err := q.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL),
			MessageBody: aws.String(msgs[0].Body), DelaySeconds: msgs[0].DelaySeconds})
		if err != nil {
			return fmt.Errorf("webhook: send: %w", err)
		}
		return nil
	}
	for len(msgs) > 0 {
		chunk := msgs[:min(len(msgs), 10)]
		msgs = msgs[len(chunk):]
		in := &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL)}
		for i, m := range chunk {
			in.Entries = append(in.Entries, sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)),
				MessageBody: aws.String(m.Body), DelaySeconds: m.DelaySeconds})
		}
		out, err := q.SQS.SendMessageBatch(ctx, in)
		if err != nil {
			return fmt.Errorf("webhook: send batch: %w", err)
		}
		if len(out.Failed) > 0 {
			return fmt.Errorf("webhook: send batch: %d of %d failed (%s)", len(out.Failed), len(chunk), aws.ToString(out.Failed[0].Code))
		}
	}
	return nil
}

// delaySeconds turns a wait into SQS's whole seconds: a part second rounds up
// (a retry never comes early), and a wait past MaxSQSDelay is capped (the job
// carries NotBefore and hops).
func delaySeconds(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	if d >= MaxSQSDelay {
		return int32(MaxSQSDelay / time.Second)
	}
	return int32((d + time.Second - 1) / time.Second)
}

// NewHTTPClient is the delivery client: outbound's client (guarded dialer, no
// proxy, no redirects, OUTBOUND_CA_FILE) with the delivery timeout.
func NewHTTPClient(g *outbound.Guard, caFile string) (*http.Client, error) {
	return outbound.NewHTTPClient(g, caFile, Timeout)
}
