package findings

import (
	"strings"

	"github.com/perfscope/perfscope/internal/profiles"
)

// lockShare is the share of lock waiting that one function's locks must
// take to dominate: of the mutex profile's delay, or of the block
// profile's delay spent in Lock calls.
const lockShare = 0.5

// lockFuncs are where the block profile records waiting for a lock, and
// where the mutex profile records releasing a contended one.
var lockFuncs = matcher{
	"sync.(*Mutex).Lock", "sync.(*Mutex).lockSlow", "sync.(*Mutex).Unlock", "sync.(*Mutex).unlockSlow",
	"sync.(*RWMutex).Lock", "sync.(*RWMutex).RLock", "sync.(*RWMutex).Unlock", "sync.(*RWMutex).RUnlock",
	"sync.(*RWMutex).rUnlockSlow", "internal/sync.(*Mutex).*",
}

func lockRule() Rule {
	return Rule{
		ID:        "lock-wait",
		Title:     "One lock dominates the waiting",
		Summary:   "most lock contention comes from one function's mutex",
		Resources: []Resource{MutexDelay, BlockDelay},
		Explanation: sentence(`
When many goroutines need the same sync.Mutex (or RWMutex) and hold it for
long, they queue: throughput stops growing with cores and latency grows with
load, while the CPU profile shows nothing wrong.

The mutex profile charges the waiters' delay to where the holder released the
lock; the block profile charges it to where waiters called Lock. The rule
charges both to the line of your code that unlocked or locked (the lock site),
leaving out the standard logger's mutex, which std-logger-lock reports, and
the runtime's internal locks. It fires when the locks of one function take at
least {} of the mutex profile's delay, or of the block profile's delay in
Lock calls, and at least {} of waiting per second of the profiled window.`,
			share(lockShare), quantity(minWaitPerSecond, "nanoseconds")),
		Fix: Fix{
			Summary: "Hold the lock for less: do the work (hashing, formatting, I/O) before taking it; shard the state (one lock per shard, or per goroutine with a merge); use atomics or sync.Map for counters and read-mostly maps.",
			Example: `// before: the hash is computed while holding the lock
mu.Lock()
h := hash(key)
counts[h]++
mu.Unlock()

// after: only the map update is under the lock
h := hash(key)
mu.Lock()
counts[h]++
mu.Unlock()`,
		},
		check: checkLock,
	}
}

func checkLock(e *env, r *Rule) []Finding {
	notLog := func(fs []frame) bool {
		return !anyFrame(fs, inPackages("log", "log/slog"))
	}
	q := callerQuery{match: lockFuncs.match, keep: notLog}
	mutex := e.callers(MutexDelay, q)
	block := e.callers(BlockDelay, q)
	// Shares of block delay are of the waiting in Lock calls: the block
	// profile also holds every channel and select wait of idle goroutines.
	blockLocks := e.stackSum(BlockDelay, func(fs []frame) bool { return anyFrame(fs, lockFuncs.match) })
	order := []Resource{MutexDelay, BlockDelay}
	ls := lines(map[Resource]sites{MutexDelay: mutex, BlockDelay: block}, order...)
	fires := func(shares map[Resource]float64) bool { return true }
	var out []Finding
	for _, g := range e.groups(ls, order, fires) {
		mshare := g.shares[MutexDelay]
		bshare := profiles.Share(g.values[BlockDelay], blockLocks)
		if mshare < lockShare && bshare < lockShare {
			continue
		}
		if !e.significantWait(g.values[MutexDelay], g.values[BlockDelay]) {
			continue
		}
		sev, res := mshare, MutexDelay
		if bshare > mshare {
			sev, res = g.shares[BlockDelay], BlockDelay
		}
		var evs []Evidence
		var where []string
		for _, l := range g.lines {
			ev := e.evidence(l, order)
			switch {
			case l.values[MutexDelay] != 0:
				ev.Detail = sentence("contended lock released here ({}); the mutex profile charges the waiters' delay to it", l.call)
			default:
				ev.Detail = sentence("goroutines waited here in {}", l.call)
			}
			where = append(where, short(l.file, l.line))
			evs = append(evs, ev)
		}
		summary := sentence("The lock in {} ({}) accounts for {} of lock waiting ({} per second).",
			g.fn, strings.Join(where, ", "), share(max(mshare, bshare)),
			quantity(int64(e.perSecond(max(g.values[MutexDelay], g.values[BlockDelay]))), "nanoseconds"))
		out = append(out, r.finding(sev, res, summary, evs))
	}
	return out
}
