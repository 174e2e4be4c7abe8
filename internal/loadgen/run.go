package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

const (
	defaultConcurrency = 8
	defaultTimeout     = 10 * time.Second
	progressInterval   = 250 * time.Millisecond
	// lateThreshold is how far behind its intended time an open-loop send
	// may leave before it counts in Late.
	lateThreshold = time.Millisecond
	// maxRate keeps the interval between intended sends at 100ns or more.
	maxRate = 1e7
	// Latencies are recorded in microseconds, up to an hour, to three
	// significant digits: about 190 KB of histogram per worker.
	maxLatencyMicros = int64(time.Hour / time.Microsecond)
)

// withDefaults fills in Config's documented defaults and rejects values no
// run can honour.
func (c Config) withDefaults() (Config, error) {
	if c.Method == "" {
		c.Method = "GET"
	}
	if c.Concurrency == 0 {
		c.Concurrency = defaultConcurrency
	}
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	switch {
	case c.Concurrency < 0:
		return c, fmt.Errorf("concurrency %d: must be positive", c.Concurrency)
	case c.Requests < 0:
		return c, fmt.Errorf("requests %d: must be positive", c.Requests)
	case c.Duration < 0:
		return c, fmt.Errorf("duration %s: must be positive", c.Duration)
	case c.Timeout < 0:
		return c, fmt.Errorf("timeout %s: must be positive", c.Timeout)
	case c.Rate < 0 || c.Rate > maxRate || math.IsNaN(c.Rate):
		return c, fmt.Errorf("rate %g: must be between 0 and %g requests per second", c.Rate, float64(maxRate))
	case c.Requests == 0 && c.Duration == 0:
		return c, errors.New("neither a number of requests nor a duration bounds the run")
	}
	return c, nil
}

// Run sends the load cfg describes to cfg.URL and returns what it measured.
//
// A closed-loop run (cfg.Rate == 0) keeps cfg.Concurrency connections busy,
// each sending its next request as soon as the previous response arrives,
// like ab and wrk; with cfg.Requests set, exactly that many requests
// complete. An open-loop run sends requests at cfg.Rate per second whether
// or not earlier ones have been answered, with at most cfg.Concurrency in
// flight, and measures each latency from the request's intended send time.
// The run ends when cfg.Requests have completed or cfg.Duration has passed,
// whichever comes first; requests in flight when the duration ends are
// waited for, up to cfg.Timeout.
//
// Failed requests are counted in the Result, not returned as errors: Run
// returns an error only for an invalid cfg or a host name that does not
// resolve. When ctx is cancelled, Run stops promptly, abandons the requests
// in flight and returns what was measured so far with Interrupted set.
func Run(ctx context.Context, cfg Config) (*Result, error) { return start(ctx, cfg, true) }

func start(ctx context.Context, cfg Config, useRaw bool) (*Result, error) {
	r, err := newRun(ctx, cfg, useRaw)
	if err != nil {
		return nil, err
	}
	return r.run(), nil
}

func newRun(ctx context.Context, cfg Config, useRaw bool) (*run, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	t, err := parseTarget(cfg.URL)
	if err != nil {
		return nil, err
	}
	req, err := buildRequest(&cfg, t)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	d, err := newDialer(ctx, t, cfg.Timeout, cfg.InsecureSkipVerify)
	if err != nil {
		return nil, err
	}
	r := &run{
		cfg:     cfg,
		ctx:     ctx,
		req:     req,
		head:    cfg.Method == "HEAD",
		dialer:  d,
		abortCh: make(chan struct{}),
		useRaw:  useRaw,
	}
	if cfg.Rate > 0 {
		r.interval = 1e9 / cfg.Rate
	}
	return r, nil
}

// A run is the state shared by one run's workers and its supervisor.
type run struct {
	cfg      Config
	ctx      context.Context
	req      []byte // the request, rendered once
	head     bool   // HEAD responses have no body
	dialer   *dialer
	interval float64 // open loop: nanoseconds between intended sends

	base    time.Time // monotonic origin of every offset below
	startAt int64     // offset of the run's start
	tickets atomic.Int64
	// stopSending ends the sending window: workers finish the request in
	// hand and stop.
	stopSending atomic.Bool
	// abort abandons requests in flight; abortCh wakes sleeping workers.
	abort   atomic.Bool
	abortCh chan struct{}

	workers []*worker
	// useRaw lets plain TCP connections use rawRoundTrip; tests turn it
	// off to exercise the net.Conn path that TLS connections take.
	useRaw bool
}

// now is the time since the run's monotonic origin, in nanoseconds. It is
// always positive, so zero can mean "no request in flight".
func (r *run) now() int64 { return int64(time.Since(r.base)) }

func (r *run) aborted() bool { return r.abort.Load() || r.ctx.Err() != nil }

func (r *run) run() *Result {
	r.base = time.Now().Add(-time.Microsecond)
	r.workers = make([]*worker, r.cfg.Concurrency)
	for i := range r.workers {
		r.workers[i] = newWorker(r)
	}
	r.preconnect()
	var wg sync.WaitGroup
	r.startAt = r.now()
	for _, w := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.interval > 0 {
				w.openLoop()
			} else {
				w.closedLoop()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	var windowC <-chan time.Time
	if r.cfg.Duration > 0 {
		t := time.NewTimer(r.cfg.Duration)
		defer t.Stop()
		windowC = t.C
	}
	watch := time.NewTicker(watchInterval(r.cfg.Timeout))
	defer watch.Stop()
	var progressC <-chan time.Time
	var p progressMeter
	if r.cfg.Progress != nil {
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		progressC = t.C
	}
	ctxDone := r.ctx.Done()
	sendEnd := int64(-1) // offset where sending stopped early, if it did
	interrupted := false
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-ctxDone:
			ctxDone = nil
			interrupted = true
			if sendEnd < 0 {
				sendEnd = r.now()
			}
			r.abortAll()
		case <-windowC:
			windowC = nil
			sendEnd = r.startAt + int64(r.cfg.Duration)
			r.stopSending.Store(true)
		case <-watch.C:
			r.killOverdue()
		case <-progressC:
			r.cfg.Progress(p.sample(r))
		}
	}
	end := r.now()
	if r.cfg.Progress != nil {
		r.cfg.Progress(p.sample(r))
	}
	if sendEnd < 0 {
		sendEnd = end
	}
	return r.result(end, sendEnd, interrupted)
}

// preconnect opens the keep-alive connections before the clock starts, as
// wrk does, so that connection setup neither delays the first open-loop
// sends nor counts in the first latencies. A connection that fails here is
// retried, and counted, by the worker's first request.
func (r *run) preconnect() {
	if r.cfg.DisableKeepAlive {
		return
	}
	n := len(r.workers)
	if r.cfg.Requests > 0 {
		n = int(min(int64(n), r.cfg.Requests))
	}
	var wg sync.WaitGroup
	for _, w := range r.workers[:n] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = w.connect()
		}()
	}
	wg.Wait()
}

// watchInterval is how often the supervisor looks for overdue requests:
// often enough that a timeout fires within a tenth of itself late.
func watchInterval(timeout time.Duration) time.Duration {
	return min(max(timeout/10, time.Millisecond), 100*time.Millisecond)
}

// aLongTimeAgo is a deadline in the past: setting it makes a blocked Read or
// Write return at once.
var aLongTimeAgo = time.Unix(1, 0)

// killOverdue interrupts requests in flight for longer than the timeout.
// Watching from here instead of setting a deadline on every request keeps
// timers off the hot path: SetDeadline per request costs more than the
// rest of the client's work on a keep-alive connection.
func (r *run) killOverdue() {
	now, timeout := r.now(), int64(r.cfg.Timeout)
	for _, w := range r.workers {
		sent := w.inflight.Load()
		if sent == 0 || now-sent < timeout {
			continue
		}
		w.mu.Lock()
		if w.inflight.Load() == sent && w.conn != nil {
			w.killed.Store(sent)
			_ = w.conn.SetDeadline(aLongTimeAgo)
		}
		w.mu.Unlock()
	}
}

// abortAll abandons every request in flight and stops every worker.
func (r *run) abortAll() {
	r.abort.Store(true)
	close(r.abortCh)
	for _, w := range r.workers {
		w.mu.Lock()
		if w.conn != nil {
			_ = w.conn.SetDeadline(aLongTimeAgo)
		}
		w.mu.Unlock()
	}
}

// A progressMeter turns worker counters into Progress snapshots.
type progressMeter struct {
	lastAt, lastDone int64
}

func (p *progressMeter) sample(r *run) Progress {
	now := r.now()
	var done, failed int64
	for _, w := range r.workers {
		done += w.completed.Load()
		failed += w.failed.Load()
	}
	pr := Progress{
		Elapsed:    time.Duration(now - r.startAt),
		Requests:   done,
		Errors:     failed,
		Planned:    r.cfg.Requests,
		PlannedDur: r.cfg.Duration,
	}
	if dt := now - p.lastAt; p.lastAt > 0 && dt > 0 {
		pr.CurrentRPS = float64(done-p.lastDone) * 1e9 / float64(dt)
	} else if pr.Elapsed > 0 {
		pr.CurrentRPS = float64(done) * 1e9 / float64(pr.Elapsed)
	}
	p.lastAt, p.lastDone = now, done
	return pr
}

// result merges the workers' counters and histograms. Workers have exited,
// so their fields are read without synchronisation.
func (r *run) result(end, sendEnd int64, interrupted bool) *Result {
	res := &Result{
		URL:             r.cfg.URL,
		Method:          r.cfg.Method,
		Mode:            "closed",
		Concurrency:     r.cfg.Concurrency,
		Rate:            r.cfg.Rate,
		KeepAlive:       !r.cfg.DisableKeepAlive,
		Start:           r.base.Add(time.Duration(r.startAt)).Round(0),
		DurationSeconds: float64(end-r.startAt) / 1e9,
		Errors:          map[string]int64{},
		StatusCodes:     map[int]int64{},
		Interrupted:     interrupted,
	}
	hist := hdrhistogram.New(1, maxLatencyMicros, 3)
	var sumNs, recorded int64
	minNs, maxNs := int64(math.MaxInt64), int64(0)
	var late Late
	var sent int64
	for _, w := range r.workers {
		res.Requests += w.completed.Load()
		res.Failures += w.failed.Load()
		res.BytesRead += w.rr.nread
		res.BytesWritten += w.bytesWritten
		for k, n := range w.kinds {
			if n > 0 {
				res.Errors[errorKind(k).String()] += n
			}
		}
		for code, n := range w.status {
			if n == 0 {
				continue
			}
			res.StatusCodes[code] += n
			if code < 200 || code > 299 {
				res.Errors["status_"+strconv.Itoa(code)] += n
			}
		}
		hist.Merge(w.hist)
		sumNs += w.sumNs
		recorded += w.recorded
		minNs, maxNs = min(minNs, w.minNs), max(maxNs, w.maxNs)
		late.Count += w.late
		late.MaxLagMs = max(late.MaxLagMs, float64(w.maxLag)/1e6)
		sent += w.sent
	}
	res.Successes = res.Requests - res.Failures
	if res.DurationSeconds > 0 {
		// Failures are fast (a 404, a refused connection): counted, they
		// would make a failing service look faster than a working one.
		res.Throughput = float64(res.Successes) / res.DurationSeconds
	}
	if recorded > 0 {
		lo, hi := float64(minNs)/1e6, float64(maxNs)/1e6
		// The histogram reports a bucket's upper bound; the exact extremes
		// keep percentiles from straying past them.
		ms := func(us int64) float64 { return min(max(float64(us)/1e3, lo), hi) }
		res.Latency = Latency{
			Min:  lo,
			Mean: float64(sumNs) / float64(recorded) / 1e6,
			P50:  ms(hist.ValueAtQuantile(50)),
			P90:  ms(hist.ValueAtQuantile(90)),
			P99:  ms(hist.ValueAtQuantile(99)),
			P999: ms(hist.ValueAtQuantile(99.9)),
			Max:  hi,
		}
	}
	res.Health = Assess(res, r.cfg.MaxErrors)
	if r.interval > 0 {
		res.Mode = "open"
		// Every send intended before sending stopped but never made was
		// dropped: the generator had no free worker for it in time.
		planned := int64(math.Ceil(float64(sendEnd-r.startAt) / r.interval))
		if r.cfg.Requests > 0 {
			planned = min(planned, r.cfg.Requests)
		}
		late.Dropped = max(0, planned-sent)
		res.Late = &late
	}
	return res
}
