package findings

import (
	"github.com/perfscope/perfscope/internal/profiles"
)

// gcShare is the share of CPU that the garbage collector and the
// allocator together must take for the gc-pressure rule to fire.
const gcShare = 0.25

func gcRule() Rule {
	return Rule{
		ID:        "gc-pressure",
		Title:     "Garbage collector pressure",
		Summary:   "allocating and collecting memory takes a large share of CPU",
		Resources: []Resource{CPU},
		symptom:   true,
		Explanation: sentence(`
Every heap allocation costs twice: once in the allocator (runtime.mallocgc),
and again when the garbage collector marks the live heap and sweeps the dead
objects. The more a program allocates, the more often the collector runs; the
larger and more pointer-rich its live heap, the longer each run marks. Under
pressure the collector also makes allocating goroutines help it (mark
assists), which shows up as latency.

The rule reads the share of CPU samples with the collector's or the
allocator's functions on their stack (see profiles.GCFunctions and
AllocatorFunctions) and fires when together they take at least {} of CPU. The
evidence lists the lines of your code that allocate the most objects, which
is where to start. Like every CPU-based rule, it needs at least {} CPU samples
to say anything.`,
			share(gcShare), count(minCPUSamples)),
		Fix: Fix{
			Summary: "Allocate less on the hot path: reuse buffers (sync.Pool, fields), preallocate slices and maps, avoid pointers in large long-lived structures; as a stopgap, raise GOGC or set GOMEMLIMIT to trade memory for CPU.",
			Example: `// before: a new buffer per request
buf := make([]byte, 0, 4096)

// after: buffers are reused
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
bp := bufs.Get().(*[]byte)
buf := (*bp)[:0]
// ... use buf ...
*bp = buf
bufs.Put(bp)`,
		},
		check: checkGC,
	}
}

func checkGC(e *env, r *Rule) []Finding {
	var gc *profiles.GCShare
	if e.a.CPU != nil && e.a.CPU.GC != nil {
		gc = e.a.CPU.GC
	} else if pr := e.profs["cpu"]; pr != nil {
		gc, _ = profiles.GC(pr.p, profiles.SampleCPU)
	}
	if gc == nil || gc.Total == 0 || gc.CombinedFraction < gcShare || !e.enoughCPU(gc.Combined) {
		return nil
	}
	order := []Resource{AllocObjects, AllocBytes}
	ls := lines(map[Resource]sites{AllocObjects: e.userLines(AllocObjects), AllocBytes: e.userLines(AllocBytes)}, order...)
	var evs []Evidence
	for _, g := range e.groups(ls, order, func(map[Resource]float64) bool { return true }) {
		for _, l := range g.lines {
			evs = append(evs, e.evidence(l, order))
		}
	}
	// Rank lines across functions by objects, the collector's work.
	sortEvidence(evs, AllocObjects)
	summary := sentence("The garbage collector and the allocator take {} of CPU (collector {}, allocator {}).",
		share(gc.CombinedFraction), share(gc.GCFraction), share(gc.AllocatorFraction))
	if len(evs) > 0 {
		summary = sentence("{} The top allocating line is {} at {}.", summary, evs[0].Function, short(evs[0].File, evs[0].Line))
	}
	f := r.finding(gc.CombinedFraction, CPU, summary, evs)
	return []Finding{f}
}
