// Command good counts words per goroutine, hashing outside any lock, and
// hands each goroutine's counts to one merger at the end: no lock at all.
package main

import (
	"context"
	"hash/fnv"
	"strconv"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

func main() {
	total := map[uint64]int{}
	harness.Main(func(ctx context.Context) {
		const workers = 8
		results := make(chan map[uint64]int, workers)
		for w := range workers {
			go func() {
				local := map[uint64]int{}
				k := int64(w)
				harness.Loop(ctx, func() {
					k += 8
					local[hash("word-"+strconv.FormatInt(k%1000, 10))]++
				})
				results <- local
			}()
		}
		for range workers {
			for h, n := range <-results {
				total[h] += n
			}
		}
	})
	println(len(total))
}

//go:noinline
func hash(word string) uint64 {
	h := fnv.New64a()
	for range 50 {
		h.Write([]byte(word))
	}
	return h.Sum64()
}
