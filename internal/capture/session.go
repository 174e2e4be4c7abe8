package capture

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/run"
)

// A session is one Profile call in progress: the load running in its own
// goroutine and the capture that follows it.
type session struct {
	o   Options
	run *run.Run
	e   *fetch.Endpoint // nil when the run has no usable pprof endpoint

	mu       sync.Mutex
	progress loadgen.Progress // the latest the load reported
}

// A loadRun is the load running in the background.
type loadRun struct {
	start time.Time
	done  chan struct{} // closed when res and err are set
	res   *loadgen.Result
	err   error
}

func (l *loadRun) finished() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// execute runs the load and, when there is a pprof endpoint, the capture
// alongside it; it returns when both are over.
func (s *session) execute(ctx context.Context) (*loadgen.Result, error) {
	cfg := s.o.Load
	userProgress := cfg.Progress
	cfg.Progress = func(p loadgen.Progress) {
		s.mu.Lock()
		s.progress = p
		s.mu.Unlock()
		if userProgress != nil {
			userProgress(p)
		}
	}
	load := &loadRun{start: time.Now(), done: make(chan struct{})}
	go func() {
		defer close(load.done)
		load.res, load.err = loadgen.Run(ctx, cfg)
	}()
	if s.e != nil {
		s.capture(ctx, load)
	}
	<-load.done
	return load.res, load.err
}

func (s *session) latestProgress() loadgen.Progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.progress
}

// knownLength is the load's planned length, or 0 when it is bounded by a
// request count and its length is only known once it is over.
func (s *session) knownLength() time.Duration {
	if s.o.Load.Requests == 0 {
		return s.o.Load.Duration
	}
	return 0
}

// warmup is the warm-up to use given what is known so far: a request-bounded
// load's length is estimated from its progress once it has some.
func (s *session) warmup() time.Duration {
	switch {
	case s.o.Warmup > 0:
		return s.o.Warmup
	case s.o.Warmup < 0:
		return 0
	}
	length := s.knownLength()
	if length == 0 {
		p := s.latestProgress()
		if p.Requests > 0 && p.Planned > 0 {
			length = time.Duration(float64(p.Elapsed) * float64(p.Planned) / float64(p.Requests))
		}
	}
	if length == 0 {
		return DefaultMaxWarmup
	}
	return min(DefaultMaxWarmup, length/10)
}

// waitWarmup waits until the warm-up is over; it reports false, with a
// note when useful, if the load ended or ctx was cancelled first.
func (s *session) waitWarmup(ctx context.Context, load *loadRun) bool {
	// Polled rather than one timer: a request-bounded load's warm-up
	// shortens as its progress reveals its length.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		warm := s.warmup()
		if time.Since(load.start) >= warm {
			return true
		}
		select {
		case <-tick.C:
		case <-load.done:
			if load.err == nil && ctx.Err() == nil {
				s.note("The load ended after %s, before the %s warm-up was over, so no profiles were taken; "+
					"run a longer load (more requests with -n, or a duration with -d).",
					round(time.Since(load.start)), round(warm))
			}
			return false
		case <-ctx.Done():
			s.note("Interrupted during the warm-up, before any profile was taken.")
			return false
		}
	}
}

// capture takes the profiles during the load window and records them in
// the run. It returns once every fetch is over.
func (s *session) capture(ctx context.Context, load *loadRun) {
	if !s.waitWarmup(ctx, load) {
		return
	}
	windowStart := time.Now()
	s.run.Warmup = windowStart.Sub(load.start).Seconds()
	var window time.Duration // 0: until the load ends
	if length := s.knownLength(); length > 0 {
		window = max(time.Second, (length - windowStart.Sub(load.start)).Truncate(time.Second))
		s.o.Logf("profiling for %s after a %s warm-up", window, round(windowStart.Sub(load.start)))
	} else {
		s.o.Logf("profiling until the load ends, after a %s warm-up", round(windowStart.Sub(load.start)))
	}

	// The cumulative profiles captured as deltas over the window.
	deltaKinds := [...]string{run.KindAllocs, run.KindHeap, run.KindBlock, run.KindMutex}
	var starts [len(deltaKinds)]fetched
	var goroutineStart fetched
	var startWG sync.WaitGroup
	// A start snapshot in flight when the run is interrupted is waited for
	// (for endGrace at most): without it, its kind has nothing to subtract
	// from, and the window measured so far would be lost.
	startCtx, stopStarts := withGrace(ctx, endGrace)
	defer stopStarts()
	for i, kind := range deltaKinds {
		startWG.Go(func() { starts[i] = s.fetchSnapshot(startCtx, kind, kind) })
	}
	startWG.Go(func() { goroutineStart = s.fetchSnapshot(startCtx, run.KindGoroutineStart, "goroutine") })
	// CPU runs on its own: its last request may end after the window.
	cpuDone := make(chan cpuResult, 1)
	go func() { cpuDone <- s.captureCPU(ctx, load, window) }()

	if window > 0 {
		timer := time.NewTimer(time.Until(windowStart.Add(window)))
		select {
		case <-timer.C:
		case <-load.done:
		case <-ctx.Done():
		}
		timer.Stop()
	} else {
		select {
		case <-load.done:
		case <-ctx.Done():
		}
	}
	s.run.Window = time.Since(windowStart).Seconds()

	endCtx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		endCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), endGrace)
		defer cancel()
	}
	var ends [len(deltaKinds)]fetched
	var goroutineEnd fetched
	var endWG sync.WaitGroup
	endWG.Go(func() { goroutineEnd = s.fetchSnapshot(endCtx, run.KindGoroutineEnd, "goroutine") })
	// The start snapshots are awaited first: a kind whose start failed
	// needs no end.
	startWG.Wait()
	for i, kind := range deltaKinds {
		if starts[i].err == nil {
			endWG.Go(func() { ends[i] = s.fetchSnapshot(endCtx, kind, kind) })
		}
	}
	endWG.Wait()
	cpu := <-cpuDone

	s.recordCPU(cpu)
	for i, kind := range deltaKinds {
		s.recordDelta(kind, starts[i], ends[i])
	}
	s.recordSnapshot(goroutineStart)
	s.recordSnapshot(goroutineEnd)
	s.noteTargetGone(ctx, goroutineEnd)
}

// withGrace returns a context that ends grace after ctx does (or when the
// returned function is called), for work that an interruption should let
// finish but not wait for without end.
func withGrace(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	g, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return g, func() { stop(); cancel() }
}

// fetched is the outcome of one snapshot fetch.
type fetched struct {
	kind string
	url  string
	snap fetch.Snapshot
	err  error
}

func (s *session) fetchSnapshot(ctx context.Context, kind, endpoint string) fetched {
	snap, err := s.e.Snapshot(ctx, endpoint)
	if fe := (*fetch.Error)(nil); errors.As(err, &fe) {
		fe.Profile = kind // the run's name for it: goroutine_start, goroutine_end
	}
	return fetched{kind: kind, url: s.e.URL(endpoint), snap: snap, err: err}
}

// A cpuResult is the CPU profile of the window, possibly shorter than the
// window (err says why) or missing.
type cpuResult struct {
	p       *profile.Profile
	seconds int
	err     error
}

// captureCPU covers the window with consecutive CPU profile requests. With a
// known window each request asks for what is left of it, at most CPUChunk.
// Otherwise each asks for the load's estimated remaining time, at least one
// second: the last request may outlast the load by under a second, the price
// of not knowing when it ends.
//
// An interruption lets the request in progress finish, and starts no other:
// net/http/pprof stops profiling when its client goes away but then has
// nobody to send the profile to, so a request given up on loses its whole
// chunk, while one waited for loses nothing. The wait is at most one chunk,
// which is why chunks are short.
func (s *session) captureCPU(ctx context.Context, load *loadRun, window time.Duration) cpuResult {
	chunk := int(s.o.CPUChunk / time.Second)
	fetchCtx := context.WithoutCancel(ctx)
	var parts []*profile.Profile
	var covered int
	var err error
	for !load.finished() && ctx.Err() == nil {
		var secs int
		if window > 0 {
			secs = min(int(window/time.Second)-covered, chunk)
		} else {
			secs = min(max(1, int(s.estimateRemaining()/time.Second)), chunk)
		}
		if secs < 1 {
			break
		}
		p, ferr := s.e.CPU(fetchCtx, time.Duration(secs)*time.Second)
		if ferr != nil {
			err = ferr
			break
		}
		parts = append(parts, p)
		covered += secs
	}
	if len(parts) == 0 {
		if err == nil {
			err = fmt.Errorf("fetch cpu profile from %s: the load ended before CPU profiling began", s.e.URL("profile"))
		}
		return cpuResult{err: err}
	}
	p := parts[0]
	if len(parts) > 1 {
		merged, merr := profile.Merge(parts)
		if merr != nil {
			return cpuResult{err: fmt.Errorf("merge %d cpu profiles: %w", len(parts), merr)}
		}
		p = merged
	}
	if err != nil {
		err = fmt.Errorf("covers only the first %ds: %w", covered, err)
	}
	return cpuResult{p: p, seconds: covered, err: err}
}

// estimateRemaining guesses how long a request-bounded load will still run
// from its progress so far.
func (s *session) estimateRemaining() time.Duration {
	p := s.latestProgress()
	var rem time.Duration
	if p.Planned > 0 && p.Requests > 0 && p.Elapsed > 0 {
		perRequest := float64(p.Elapsed) / float64(p.Requests)
		rem = time.Duration(perRequest * float64(p.Planned-p.Requests))
	}
	if p.PlannedDur > 0 && (rem == 0 || p.PlannedDur-p.Elapsed < rem) {
		rem = p.PlannedDur - p.Elapsed
	}
	return rem
}

func (s *session) recordCPU(c cpuResult) {
	pf := run.ProfileFile{Kind: run.KindCPU, URL: s.e.URL("profile")}
	if c.p != nil {
		s.saveInto(&pf, c.p)
		pf.Seconds = float64(c.seconds)
	}
	if c.err != nil {
		pf.Error = joinErr(pf.Error, c.err.Error())
		var fe *fetch.Error
		if errors.As(c.err, &fe) && fe.CPUBusy() {
			said := fe.Body
			if said == "" {
				said = fe.Err.Error()
			}
			s.note("The CPU profile could not be taken: another CPU profile was already running in the target (it said %q). "+
				"A process runs one CPU profiler at a time; stop the other one (a pprof session, a continuous-profiling agent) and run again.",
				said)
		}
	}
	s.run.Profiles = append(s.run.Profiles, pf)
}

// recordDelta subtracts the start snapshot from the end one, as pprof's
// ?seconds= does on the server, and saves the difference.
func (s *session) recordDelta(kind string, start, end fetched) {
	pf := run.ProfileFile{Kind: kind, URL: start.url}
	switch {
	case start.err != nil:
		pf.Error = start.err.Error()
	case end.err != nil:
		pf.Error = end.err.Error()
	default:
		d, err := fetch.DeltaBetween(start.snap, end.snap)
		if err != nil {
			pf.Error = fmt.Sprintf("%s delta from %s: %v", kind, start.url, err)
			break
		}
		s.saveInto(&pf, d)
		pf.Seconds = end.snap.At.Sub(start.snap.At).Seconds()
		// An empty cumulative profile means nothing was ever recorded, which
		// for these two is almost always because recording is off by default.
		if len(end.snap.Profile.Sample) == 0 {
			switch kind {
			case run.KindBlock:
				s.note("The block profile is empty: the target never turned on block profiling (it is off by default), " +
					"or nothing ever blocked. Turn it on with runtime.SetBlockProfileRate(10000) early in main, " +
					"or serve pprof with perfscope's expose package, which does.")
			case run.KindMutex:
				s.note("The mutex profile is empty: the target never turned on mutex profiling (it is off by default), " +
					"or no lock was ever contended. Turn it on with runtime.SetMutexProfileFraction(100) early in main, " +
					"or serve pprof with perfscope's expose package, which does.")
			}
		}
	}
	s.run.Profiles = append(s.run.Profiles, pf)
}

func (s *session) recordSnapshot(f fetched) {
	pf := run.ProfileFile{Kind: f.kind, URL: f.url}
	if f.err != nil {
		pf.Error = f.err.Error()
	} else {
		s.saveInto(&pf, f.snap.Profile)
	}
	s.run.Profiles = append(s.run.Profiles, pf)
}

// saveInto writes p into the run directory and records it in pf.
func (s *session) saveInto(pf *run.ProfileFile, p *profile.Profile) {
	name, err := s.run.SaveProfile(pf.Kind, p)
	if err != nil {
		pf.Error = err.Error()
		return
	}
	pf.File = name
	pf.Samples = len(p.Sample)
}

// noteTargetGone explains, once, a target that stopped answering before the
// window's end, instead of leaving the reader to infer it from one
// connection error per profile.
func (s *session) noteTargetGone(ctx context.Context, goroutineEnd fetched) {
	var fe *fetch.Error
	if ctx.Err() != nil || !errors.As(goroutineEnd.err, &fe) || !fe.Unreachable {
		return
	}
	s.note("The target stopped answering before the end of the profile window (%s); "+
		"the load result and the profiles taken before that are saved.", fe.Err)
}

func (s *session) note(format string, args ...any) {
	s.run.Notes = append(s.run.Notes, fmt.Sprintf(format, args...))
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// round shortens a duration for messages.
func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
