// Command bad collects ids into a slice and an index map that both start
// empty, so they are regrown and copied many times per batch.
package main

import (
	"context"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

func main() {
	harness.Main(func(ctx context.Context) {
		n := 0
		harness.Loop(ctx, func() {
			ids, index := collect(2000)
			n += len(ids) + len(index)
		})
		println(n)
	})
}

//go:noinline
func collect(n int) ([]int, map[int]int) {
	var ids []int
	index := map[int]int{}
	for i := range n {
		ids = append(ids, i*7) // want: growth
		index[i*7] = i         // want: growth
	}
	return ids, index
}
