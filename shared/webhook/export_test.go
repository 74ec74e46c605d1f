package webhook

import (
	"context"
	"time"

	"github.com/gale-rmm/gale/shared/secret"
)

// Open unseals a stored webhook as the worker does (tests only).
func Open(box *secret.Box, r *record) (url string, sec []byte, headers []Header, err error) {
	h, err := openRecord(box, r)
	if err != nil {
		return "", nil, nil, err
	}
	return h.url, h.secret, h.headers, nil
}

// Claim takes an attempt as a worker does before sending (tests of a worker
// that dies holding it).
func Claim(ctx context.Context, st Store, j Job, now time.Time) (*Delivery, error) {
	return st.claim(ctx, j, newClaimID(), now.UnixMilli(), now.Add(claimFor).UnixMilli())
}

// FailRun reads a webhook's failure run (failRun, failRunSince).
func FailRun(ctx context.Context, st Store, orgID, id string) (int64, string, error) {
	r, err := st.Get(ctx, orgID, id)
	if err != nil {
		return 0, "", err
	}
	return r.FailRun, r.FailRunSince, nil
}

// MarkDeleting hides a webhook as a DELETE does before removing its
// deliveries (tests of a DELETE that stopped half-way).
func MarkDeleting(ctx context.Context, st Store, orgID, id string) error {
	return st.St.Do(ctx, markDeleting(orgID, id))
}
