// Command good keeps the same cache but reuses one preallocated batch of
// records for every event batch: no allocation per event.
package main

import (
	"context"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type record struct {
	next  *record
	key   *string
	attrs [4]int
}

var cache []*record

func main() {
	for i := range 300_000 {
		r := &record{}
		fill(r, i)
		cache = append(cache, r)
	}
	batch := make([]record, 64)
	harness.Main(func(ctx context.Context) {
		n := 0
		harness.Loop(ctx, func() {
			var head *record
			for i := range batch {
				r := &batch[i]
				fill(r, i)
				r.next = head
				head = r
			}
			n += len(head.attrs)
		})
		println(n, len(cache))
	})
}

var key = "event"

//go:noinline
func fill(r *record, i int) {
	r.key = &key
	for j := range r.attrs {
		r.attrs[j] = i + j
	}
}
