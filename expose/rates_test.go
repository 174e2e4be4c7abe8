package expose

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// BenchmarkBlockProfileRate measures what block profiling adds to one
// blocking event: two goroutines hand a token back and forth over
// unbuffered channels, so every operation parks a goroutine, as the wait in
// net/http's connReader.abortPendingRead does about once per request. With
// any rate above 0 the runtime reads the CPU's cycle counter when a
// goroutine blocks and again when it resumes; an event of d nanoseconds is
// then recorded (its stack walked and hashed under a global lock) with
// probability d/rate.
func BenchmarkBlockProfileRate(b *testing.B) {
	for _, rate := range []int{0, 1, 10_000, 100_000, 1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			runtime.SetBlockProfileRate(rate)
			defer runtime.SetBlockProfileRate(0)
			ping, pong := make(chan struct{}), make(chan struct{})
			go func() {
				for range ping {
					pong <- struct{}{}
				}
			}()
			defer close(ping)
			for b.Loop() {
				ping <- struct{}{}
				<-pong
			}
		})
	}
}

// BenchmarkMutexProfileFraction measures what mutex profiling adds to
// contended sync.Mutex use: 8×GOMAXPROCS goroutines share one mutex around a
// critical section long enough that waiters park. One contended unlock in
// fraction is recorded with its stack.
func BenchmarkMutexProfileFraction(b *testing.B) {
	for _, fraction := range []int{0, 10, 100, 1000} {
		b.Run(fmt.Sprintf("fraction=%d", fraction), func(b *testing.B) {
			prev := runtime.SetMutexProfileFraction(fraction)
			defer runtime.SetMutexProfileFraction(prev)
			var mu sync.Mutex
			var x uint64
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					mu.Lock()
					for range 100 {
						x = x*6364136223846793005 + 1
					}
					mu.Unlock()
				}
			})
		})
	}
}
