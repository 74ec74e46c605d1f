package main

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gale-rmm/gale/shared/emulator"
	"github.com/gale-rmm/gale/shared/routes"
	"github.com/gale-rmm/gale/shared/sweep"
)

type sqsHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// poll feeds a queue to its worker as an SQS event source mapping would: batches
// of up to BatchSize, and only messages not reported in BatchItemFailures are deleted.
func poll(ctx context.Context, q *sqs.Client, rq routes.Queue, res emulator.Queue, handle sqsHandler, log *slog.Logger) {
	for ctx.Err() == nil {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(res.URL), MaxNumberOfMessages: int32(min(rq.BatchSize, 10)), WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		})
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("poll failed", "queue", rq.Name, "err", err)
				time.Sleep(time.Second)
			}
			continue
		}
		if len(out.Messages) == 0 {
			continue
		}
		batch := events.SQSEvent{}
		for _, m := range out.Messages {
			batch.Records = append(batch.Records, events.SQSMessage{
				MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
				Body: aws.ToString(m.Body), Attributes: m.Attributes, EventSource: "aws:sqs",
				EventSourceARN: res.ARN, AWSRegion: "us-east-1",
			})
		}
		resp, err := handle(ctx, batch)
		if err != nil {
			log.Warn("worker failed the whole batch", "queue", rq.Name, "err", err)
			continue
		}
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for i, m := range out.Messages {
			if failed[aws.ToString(m.MessageId)] {
				continue
			}
			if _, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(res.URL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				log.Warn("delete failed", "queue", rq.Name, "message", strconv.Itoa(i), "err", err)
			}
		}
	}
}

// schedule fires the sweeper for each routes.Schedules entry at its rate, and
// once at start so a fresh run is tidy at once.
func schedule(ctx context.Context, sw *sweep.Sweeper, log *slog.Logger) {
	for _, s := range routes.Schedules {
		go func() {
			t := time.NewTicker(time.Duration(s.RateMinutes) * time.Minute)
			defer t.Stop()
			for {
				if err := sw.Handle(ctx, sweep.Event{Job: s.Job}); err != nil {
					log.Warn("sweeper job failed", "job", s.Job, "err", err)
				}
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
}
