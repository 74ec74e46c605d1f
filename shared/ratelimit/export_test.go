package ratelimit

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
)

// FastCount is the one write of a count on a live row (tests replay it).
func FastCount(key store.KeyRef, limit int, cur, ttl int64) *store.Write {
	return fastCount(key, limit, cur, ttl, func(u expression.UpdateBuilder) expression.UpdateBuilder { return u })
}

// SlotIndex is the slot of an instant in a window.
var SlotIndex = slotIndex
