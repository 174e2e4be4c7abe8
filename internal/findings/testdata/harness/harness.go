// Package harness runs the workloads of the findings tests under the
// profilers and saves a run the way a capture would: cpu, allocs, block,
// mutex and goroutine profiles at the start and end of the work, as
// <kind>.pb.gz files beside a run.json in the directory given by -out.
// testdata/capture.sh runs each workload once and commits the run.
package harness

import (
	"context"
	"flag"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/perfscope/perfscope/internal/run"
)

// Profiling rates as perfscope's expose package sets them for a service,
// except that every contention is recorded: the tests' windows are short.
const (
	blockProfileRate     = 10_000
	mutexProfileFraction = 1
)

// Defaults of the work's length: at least DefaultDuration of wall time and
// DefaultMinCPU of the process's CPU time, so that a busy machine still
// yields a few dozen CPU samples, but never more than MaxDuration.
const (
	DefaultDuration = 500 * time.Millisecond
	DefaultMinCPU   = 250 * time.Millisecond
	MaxDuration     = 3 * time.Second
)

// Main runs work under the profilers and writes the profiles. work must
// return soon after its context is done, which happens once the work has
// run for DefaultDuration and used DefaultMinCPU of CPU time.
func Main(work func(ctx context.Context)) { MainFor(DefaultDuration, DefaultMinCPU, work) }

// MainFor is Main with the work's minimum wall time and CPU time; a
// workload that is meant to idle asks for no CPU time.
func MainFor(d, minCPU time.Duration, work func(ctx context.Context)) {
	out := flag.String("out", "", "directory to write the run into")
	// Longer windows give the committed profiles more samples than a
	// rule needs, so that they hold what it looks for with room to spare.
	scale := flag.Float64("scale", 1, "multiply the work's minimum wall time, CPU time and maximum length by this")
	flag.Parse()
	if *out == "" {
		log.Fatal("-out is required")
	}
	d = time.Duration(*scale * float64(d))
	minCPU = time.Duration(*scale * float64(minCPU))
	maxDuration := time.Duration(*scale * float64(MaxDuration))
	runtime.SetBlockProfileRate(blockProfileRate)
	runtime.SetMutexProfileFraction(mutexProfileFraction)

	write(*out, "goroutine", "goroutine_start")
	cpu, err := os.Create(filepath.Join(*out, "cpu.pb.gz"))
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	go stopWhen(cancel, d, minCPU, maxDuration)
	work(ctx)
	cancel()
	pprof.StopCPUProfile()
	end := time.Now()
	if err := cpu.Close(); err != nil {
		log.Fatal(err)
	}
	write(*out, "goroutine", "goroutine_end")
	// The allocation profile publishes a cycle's allocations once a GC ends.
	runtime.GC()
	write(*out, "allocs", "allocs")
	write(*out, "block", "block")
	write(*out, "mutex", "mutex")
	saveRun(*out, start, end)
}

// saveRun describes the profiles in run.json, as a capture does, with the
// CPUs the workload could use: the rules judge CPU shares against them.
func saveRun(dir string, start, end time.Time) {
	r := &run.Run{
		ID: filepath.Base(dir), Dir: dir, Target: "http://127.0.0.1/", TargetCPUs: runtime.NumCPU(),
		Args: os.Args, Start: start, End: end, Window: end.Sub(start).Seconds(), Version: "devel",
	}
	for _, kind := range []string{run.KindCPU, run.KindAllocs, run.KindBlock, run.KindMutex,
		run.KindGoroutineStart, run.KindGoroutineEnd} {
		pf := run.ProfileFile{Kind: kind, File: kind + ".pb.gz"}
		if kind == run.KindCPU || kind == run.KindBlock || kind == run.KindMutex {
			pf.Seconds = r.Window
		}
		r.Profiles = append(r.Profiles, pf)
	}
	if err := r.Save(); err != nil {
		log.Fatal(err)
	}
}

// stopWhen cancels once d has passed and the process has used minCPU of
// CPU time since, or once maxDuration has passed.
func stopWhen(cancel context.CancelFunc, d, minCPU, maxDuration time.Duration) {
	start, cpu0 := time.Now(), cpuTime()
	for {
		time.Sleep(20 * time.Millisecond)
		took := time.Since(start)
		if took >= maxDuration || (took >= d && cpuTime()-cpu0 >= minCPU) {
			cancel()
			return
		}
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func write(dir, name, file string) {
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

// Loop calls f until ctx is done. It polls the Done channel rather than
// ctx.Err, which takes the context's mutex: hot loops on several
// goroutines would contend on it and show in the mutex profile.
func Loop(ctx context.Context, f func()) {
	done := ctx.Done()
	for {
		select {
		case <-done:
			return
		default:
			f()
		}
	}
}

// Parallel runs Loop(ctx, f) on n goroutines and waits for them.
func Parallel(ctx context.Context, n int, f func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { Loop(ctx, f) })
	}
	wg.Wait()
}
