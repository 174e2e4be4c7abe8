// Command bad keeps a large pointer-rich cache and allocates a fresh
// linked record for every event, so the collector runs constantly and
// has much to mark each time.
package main

import (
	"context"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type record struct {
	next  *record
	key   *string
	attrs []*int
}

var cache []*record

func main() {
	for i := range 300_000 {
		cache = append(cache, newRecord(i))
	}
	harness.Main(func(ctx context.Context) {
		n := 0
		harness.Loop(ctx, func() {
			var head *record
			for i := range 64 {
				r := newRecord(i)
				r.next = head
				head = r
			}
			n += len(head.attrs)
		})
		println(n, len(cache))
	})
}

//go:noinline
func newRecord(i int) *record {
	k := "event"
	r := &record{key: &k, attrs: make([]*int, 4)} // want: gc-pressure
	for j := range r.attrs {
		v := i + j
		r.attrs[j] = &v
	}
	return r
}
