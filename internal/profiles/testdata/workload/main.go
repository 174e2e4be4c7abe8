// Command workload is a test program with a known performance shape. It burns
// CPU in named functions (one of them recursive), allocates at known lines,
// contends a mutex, blocks on a channel and parks goroutines, each phase
// under the profiler labels a labelled HTTP server would use, and writes
// cpu, allocs, block, mutex and goroutine profiles into -out.
//
// Lines the tests look for carry a "site:" comment.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles/testdata/workload/shapes"
)

func main() {
	out := flag.String("out", "", "directory to write profiles into")
	scale := flag.Int("scale", 1, "multiply the work by this")
	flag.Parse()
	if *out == "" {
		log.Fatal("-out is required")
	}
	// Sample allocations finely enough that small sites show up, yet not so
	// finely that recording stacks dominates the run.
	runtime.MemProfileRate = 32 << 10
	runtime.SetBlockProfileRate(1)
	runtime.SetMutexProfileFraction(1)

	writeProfile(*out, "goroutine", "goroutine_start")
	cpu, err := os.Create(filepath.Join(*out, "cpu.pb.gz"))
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		log.Fatal(err)
	}

	// A pointer-rich live heap gives every GC cycle marking to do.
	live := buildLiveHeap(100_000)
	stop := make(chan struct{})
	var sink []any
	route := func(name string, f func(context.Context)) {
		pprof.Do(context.Background(), pprof.Labels("http.route", name, "http.method", "GET"), f)
	}
	for range *scale {
		route("GET /burn", func(context.Context) { sink = append(sink, burnCPU(150_000_000)) })
		route("GET /fib", func(context.Context) { sink = append(sink, fib(38)) })
		route("GET /concat", func(context.Context) {
			for range 2000 {
				sink = append(sink, len(concatLoop(300)))
			}
			sink = append(sink, formatLabels(100_000), makeBuffers(300))
		})
		route("GET /shapes", func(context.Context) { sink = append(sink, shapes.Spiral(20_000_000)) })
		route("GET /parse", func(context.Context) { sink = append(sink, parseProfiles(500)) })
		route("GET /lock", func(context.Context) { sink = append(sink, contendMutex(4, 2000)) })
		route("GET /wait", func(context.Context) { sink = append(sink, waitOnChannel(produce(50, time.Millisecond))) })
	}
	var started sync.WaitGroup
	route("GET /park", func(context.Context) {
		for range 25 {
			started.Add(1)
			go parkForever(&started, stop)
		}
	})
	started.Wait()
	time.Sleep(100 * time.Millisecond) // from started to parked is a few instructions

	pprof.StopCPUProfile()
	if err := cpu.Close(); err != nil {
		log.Fatal(err)
	}
	// The allocation profile publishes a cycle's allocations once a GC ends.
	runtime.GC()
	writeProfile(*out, "allocs", "allocs")
	writeProfile(*out, "block", "block")
	writeProfile(*out, "mutex", "mutex")
	writeProfile(*out, "goroutine", "goroutine_end")
	close(stop)
	runtime.KeepAlive(live)
	fmt.Fprintln(os.Stderr, len(sink))
}

func writeProfile(dir, name, file string) {
	f, err := os.Create(filepath.Join(dir, file+".pb.gz"))
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

type node struct {
	next *node
	val  []int
}

func buildLiveHeap(n int) *node {
	var head *node
	for i := range n {
		head = &node{next: head, val: make([]int, i%8)}
	}
	return head
}

// burnCPU is a pure CPU loop.
//
//go:noinline
func burnCPU(n int) uint64 {
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13 // site: burn
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// fib is recursive on purpose: its cum must count each sample once.
//
//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// concatLoop builds a string the slow way: every += allocates a new string
// inside runtime.concatstrings.
//
//go:noinline
func concatLoop(n int) string {
	s := ""
	for range n {
		s += "ab" // site: concat
	}
	return s
}

//go:noinline
func formatLabels(n int) int {
	total := 0
	for i := range n {
		label := fmt.Sprintf("item-%d", i+1000) // site: sprintf
		total += len(label)
	}
	return total
}

// makeBuffers allocates few objects but many bytes.
//
//go:noinline
func makeBuffers(n int) int {
	total := 0
	for range n {
		buf := make([]byte, 1<<20) // site: buffers
		buf[len(buf)-1] = 1
		total += len(buf)
	}
	return total
}

// parseProfiles spends CPU in a dependency: pprof's profile decoder.
//
//go:noinline
func parseProfiles(n int) int {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		log.Fatal(err)
	}
	samples := 0
	for range n {
		p, err := profile.ParseData(buf.Bytes())
		if err != nil {
			log.Fatal(err)
		}
		samples += len(p.Sample)
	}
	return samples
}

//go:noinline
func contendMutex(workers, iterations int) int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	counter := 0
	for range workers {
		wg.Go(func() {
			for range iterations {
				mu.Lock() // site: lock
				counter += int(burnCPU(2000) & 1)
				mu.Unlock() // site: unlock
			}
		})
	}
	wg.Wait()
	return counter
}

func produce(n int, every time.Duration) <-chan int {
	ch := make(chan int)
	go func() {
		for i := range n {
			time.Sleep(every)
			ch <- i
		}
		close(ch)
	}()
	return ch
}

//go:noinline
func waitOnChannel(ch <-chan int) int {
	sum := 0
	for v := range ch { // site: chanrecv
		sum += v
	}
	return sum
}

//go:noinline
func parkForever(started *sync.WaitGroup, stop <-chan struct{}) {
	started.Done()
	<-stop // site: park
}
