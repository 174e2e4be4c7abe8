// Command good counts words per goroutine, hashing outside any lock, and
// merges the counts at the end.
package main

import (
	"context"
	"hash/fnv"
	"strconv"
	"sync"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

func main() {
	total := map[uint64]int{}
	harness.Main(func(ctx context.Context) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for w := range 8 {
			wg.Go(func() {
				local := map[uint64]int{}
				k := int64(w)
				harness.Loop(ctx, func() {
					k += 8
					local[hash("word-"+strconv.FormatInt(k%1000, 10))]++
				})
				mu.Lock()
				for h, n := range local {
					total[h] += n
				}
				mu.Unlock()
			})
		}
		wg.Wait()
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
