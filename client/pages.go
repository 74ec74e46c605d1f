package client

import "iter"

// Fetch reads one page of a list: page counts from 1; cursor is nil on the
// first call and the previous page's nextCursor after it (lists that take a
// cursor; the others page by number).
type Fetch[T any] func(page int, cursor *string) ([]T, Pagination, error)

// All walks a list to its end, one request per page, yielding each item; an
// error ends the walk after it is yielded. Stop ranging to stop fetching.
//
//	for k, err := range client.All(func(page int, cursor *string) ([]client.ApiKey, client.Pagination, error) {...})
func All[T any](fetch Fetch[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		page := 1
		var cursor *string
		for {
			items, p, err := fetch(page, cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			switch {
			case p.NextCursor != nil && *p.NextCursor != "":
				cursor = p.NextCursor
			case cursor == nil && len(items) > 0 && p.Page*p.Limit < p.Total:
				page = p.Page + 1
			default:
				return
			}
		}
	}
}
