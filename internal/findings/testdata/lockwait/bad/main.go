// Command bad counts words into one map behind one mutex, hashing inside
// the critical section, from eight goroutines.
package main

import (
	"context"
	"hash/fnv"
	"strconv"
	"sync"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

type counts struct {
	mu sync.Mutex
	m  map[uint64]int
}

func main() {
	c := &counts{m: map[uint64]int{}}
	harness.Main(func(ctx context.Context) {
		var i int64
		var mu sync.Mutex
		harness.Parallel(ctx, 8, func() {
			mu.Lock()
			i++
			k := i
			mu.Unlock()
			c.add("word-" + strconv.FormatInt(k%1000, 10))
		})
	})
	println(len(c.m))
}

//go:noinline
func (c *counts) add(word string) {
	c.mu.Lock()
	h := fnv.New64a()
	for range 50 {
		h.Write([]byte(word))
	}
	c.m[h.Sum64()]++
	c.mu.Unlock() // want: lock-wait
}
