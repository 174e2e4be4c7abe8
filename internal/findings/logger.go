package findings

import (
	"strings"
)

// Thresholds of the std-logger-lock rule: the logger's share of the mutex
// profile's delay or of the block profile's delay, and the wait per second
// of the profiled window below which contention is too small to matter
// whatever its share.
const (
	loggerMutexShare = 0.10
	loggerBlockShare = 0.05
	// minWaitPerSecond is 25ms of waiting per second: 2.5% of one
	// goroutine's time. Pools inside libraries (http.Transport's idle
	// connections) contend at a few ms per second under any load.
	minWaitPerSecond = 25e6
)

func loggerRule() Rule {
	return Rule{
		ID:        "std-logger-lock",
		Title:     "Requests wait for the standard logger's lock",
		Summary:   "log.Logger serializes every call on one mutex held across its write",
		Resources: []Resource{MutexDelay, BlockDelay},
		Explanation: sentence(`
A log.Logger (the standard library's log package, and log/slog's default
handler, which writes through it) holds one mutex while it formats the prefix
and writes the line to its io.Writer. With an unbuffered file or a terminal as
the writer that is a system call under the lock, so under concurrent load
requests queue behind each other to log.

The rule charges the delay the mutex and block profiles record inside package
log to the line of your code that logged. It fires when that reaches {} of the
mutex profile's delay or {} of the block profile's delay, and at least {} of
waiting per second of the profiled window (less is too small to matter
whatever its share).`,
			share(loggerMutexShare), share(loggerBlockShare), quantity(minWaitPerSecond, "nanoseconds")),
		Fix: Fix{
			Summary: "Keep the lock short and the write out of it: log into a buffer the logger flushes in the background, or hand lines to one writer goroutine; log less on the hot path.",
			Example: `// before: every request takes the logger's lock across a write(2)
logger := log.New(file, "", log.LstdFlags)

// after: the logger writes to memory; a goroutine flushes to the file
bw := bufio.NewWriterSize(file, 64<<10)
logger := log.New(&lockedWriter{w: bw}, "", log.LstdFlags)
go func() {
	for range time.Tick(200 * time.Millisecond) {
		flush(bw) // under the same lock as lockedWriter
	}
}()`,
		},
		check: checkLogger,
	}
}

func checkLogger(e *env, r *Rule) []Finding {
	inLog := inPackages("log", "log/slog")
	q := callerQuery{match: inLog}
	order := []Resource{MutexDelay, BlockDelay}
	byRes := map[Resource]sites{MutexDelay: e.callers(MutexDelay, q), BlockDelay: e.callers(BlockDelay, q)}
	ls := lines(byRes, order...)
	fires := func(shares map[Resource]float64) bool {
		return (shares[MutexDelay] >= loggerMutexShare || shares[BlockDelay] >= loggerBlockShare)
	}
	var out []Finding
	for _, g := range e.groups(ls, order, fires) {
		if !e.significantWait(g.values[MutexDelay], g.values[BlockDelay]) {
			continue
		}
		sev, res := g.top(order)
		var evs []Evidence
		var calls []string
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			if !contains(calls, ev.Call) && ev.Call != "" {
				calls = append(calls, ev.Call)
			}
			evs = append(evs, ev)
		}
		summary := sentence("{} waits for the standard logger's mutex when it calls {}: {} ({} of waiting per second).",
			g.fn, strings.Join(calls, ", "), shareText(g, order), quantity(int64(e.perSecond(max(g.values[MutexDelay], g.values[BlockDelay]))), "nanoseconds"))
		out = append(out, r.finding(sev, res, summary, evs))
	}
	return out
}

// windowSeconds is how long the profiles cover.
func (e *env) windowSeconds() float64 {
	if e.a.Run.Window > 0 {
		return e.a.Run.Window
	}
	if e.a.CPU != nil && e.a.CPU.Seconds > 0 {
		return e.a.CPU.Seconds
	}
	for _, pr := range e.profs {
		if pr.p.DurationNanos > 0 {
			return float64(pr.p.DurationNanos) / 1e9
		}
	}
	return 0
}

// perSecond divides a delay by the window; the delay itself when the
// window is unknown.
func (e *env) perSecond(delay int64) float64 {
	if s := e.windowSeconds(); s > 0 {
		return float64(delay) / s
	}
	return float64(delay)
}

// significantWait reports whether either delay amounts to at least
// minWaitPerSecond.
func (e *env) significantWait(delays ...int64) bool {
	for _, d := range delays {
		if e.perSecond(d) >= minWaitPerSecond {
			return true
		}
	}
	return false
}
