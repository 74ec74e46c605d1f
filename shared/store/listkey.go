package store

import "strings"

// NewestFirst is a list-index sort key for a list ordered newest first, ties
// by id ascending, read with Query.Descending: at (a fixed-width time stamp,
// clock.Format), then id with each character complemented ('-'..'f' becomes
// '~'..'E'), so the descending read sorts equal stamps by id ascending. Ids
// are UUIDs (lowercase hex and '-').
func NewestFirst(at, id string) string {
	var b strings.Builder
	b.Grow(len(at) + 1 + len(id))
	b.WriteString(at)
	b.WriteByte('#')
	for i := 0; i < len(id); i++ {
		b.WriteByte('~' - (id[i] - '-'))
	}
	return b.String()
}
