// Command good sizes the slice and the map up front.
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
	ids := make([]int, 0, n)
	index := make(map[int]int, n)
	for i := range n {
		ids = append(ids, i*7)
		index[i*7] = i
	}
	return ids, index
}
