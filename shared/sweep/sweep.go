// Package sweep runs the scheduled jobs of routes.Schedules. EventBridge (or the
// local runtime's ticker) invokes the sweeper with {"job": "<name>"}; each job is
// idempotent, so a repeated or overlapping run does no harm.
package sweep

import (
	"context"
	"fmt"
	"log/slog"
)

// Event is the EventBridge rule's input.
type Event struct {
	Job string `json:"job"`
}

// Job is one scheduled task; it returns how many items it handled.
type Job func(ctx context.Context) (int, error)

// Sweeper dispatches events to jobs.
type Sweeper struct {
	Jobs map[string]Job
	Log  *slog.Logger
}

// Handle runs the named job. A scheduled job whose feature is not built yet is
// logged and skipped rather than failed, so the schedule does not page anyone.
func (s *Sweeper) Handle(ctx context.Context, ev Event) error {
	job, ok := s.Jobs[ev.Job]
	if !ok {
		s.Log.WarnContext(ctx, "sweeper job not built yet", "job", ev.Job)
		return nil
	}
	n, err := job(ctx)
	if err != nil {
		return fmt.Errorf("sweep %s: %w", ev.Job, err)
	}
	s.Log.InfoContext(ctx, "sweeper job done", "job", ev.Job, "handled", n)
	return nil
}
