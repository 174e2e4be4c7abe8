package profiles

import (
	"strings"

	"github.com/google/pprof/profile"
)

// A GCShare is how much of a CPU profile the garbage collector and the
// memory allocator take. A sample counts toward GC when any frame of its
// stack is one of GCFunctions, toward the allocator when any frame is
// one of AllocatorFunctions; each sample counts once per category.
//
// The two overlap: a goroutine that allocates faster than the collector
// marks is made to help (runtime.gcAssistAlloc, called from
// runtime.mallocgc), and allocating sweeps spans lazily; that time is both
// GC and allocator. Combined counts it once.
type GCShare struct {
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	Total      int64  `json:"total"`
	GC         int64  `json:"gc"`
	// GCFraction is GC / Total.
	GCFraction float64 `json:"gc_fraction"`
	Allocator  int64   `json:"allocator"`
	// AllocatorFraction is Allocator / Total.
	AllocatorFraction float64 `json:"allocator_fraction"`
	Combined          int64   `json:"combined"`
	// CombinedFraction is Combined / Total: the CPU that allocating and
	// collecting memory cost together.
	CombinedFraction float64 `json:"combined_fraction"`
}

// GCFunctions returns the runtime functions whose presence on a stack makes a
// CPU sample garbage-collection work. A name ending in "*" is a prefix.
//
//   - background marking: runtime.gcBgMarkWorker (dedicated, fractional and
//     idle mark workers) and what it runs: runtime.gcDrain*,
//     runtime.markroot*, runtime.scanobject, runtime.scanObject*,
//     runtime.scanSpan, runtime.scanblock, runtime.scanstack,
//     runtime.greyobject (listed too for stacks truncated above them);
//   - mark assists charged to allocating goroutines:
//     runtime.gcAssistAlloc*;
//   - phase changes and stop-the-world work: runtime.gcStart,
//     runtime.gcMarkDone, runtime.gcMarkTermination, runtime.gcSweep,
//     runtime.GC;
//   - sweeping, in the background and on allocation: runtime.bgsweep,
//     runtime.sweepone, runtime.deductSweepCredit,
//     runtime.(*sweepLocked).sweep, runtime.(*mspan).ensureSwept;
//   - returning memory to the OS: runtime.bgscavenge;
//   - the write barrier's slow path: runtime.wbBufFlush*,
//     runtime.gcWriteBarrier*;
//   - pprof's runtime._GC, the frame of samples taken in GC code whose
//     stack could not be unwound.
func GCFunctions() []string {
	return []string{
		"runtime.gcBgMarkWorker", "runtime.gcDrain*", "runtime.markroot*",
		"runtime.scanobject", "runtime.scanObject*", "runtime.scanSpan",
		"runtime.scanblock", "runtime.scanstack", "runtime.greyobject",
		"runtime.gcAssistAlloc*",
		"runtime.gcStart", "runtime.gcMarkDone", "runtime.gcMarkTermination", "runtime.gcSweep", "runtime.GC",
		"runtime.bgsweep", "runtime.sweepone", "runtime.deductSweepCredit",
		"runtime.(*sweepLocked).sweep", "runtime.(*mspan).ensureSwept",
		"runtime.bgscavenge",
		"runtime.wbBufFlush*", "runtime.gcWriteBarrier*",
		"runtime._GC",
	}
}

// AllocatorFunctions returns the runtime functions whose presence on a stack
// makes a CPU sample allocation work: runtime.mallocgc and its
// size-specialised variants (runtime.mallocgcTiny, mallocgcSmallNoscan,
// mallocgcSmallScanNoHeader, mallocgcLarge, ...), which every heap
// allocation goes through — new, make, append growth, string
// concatenation, conversions, closures and escaping variables alike — and
// everything they call: taking spans from mcache, mcentral and mheap,
// zeroing memory, the allocation profiler, and the GC assists and lazy
// sweeping that GCShare also counts as GC.
func AllocatorFunctions() []string { return []string{"runtime.mallocgc*"} }

// GC computes the share of a CPU profile's sampleType ("" for the default,
// cpu nanoseconds in a Go CPU profile) that the garbage collector and the
// allocator take.
func GC(p *profile.Profile, sampleType string) (*GCShare, error) {
	vi, err := SampleIndex(p, sampleType)
	if err != nil {
		return nil, err
	}
	g := &GCShare{SampleType: p.SampleType[vi].Type, Unit: unitOf(p, vi), Total: SampleTotal(p, vi)}
	// Functions are shared by all samples; match each once.
	type kind struct{ gc, alloc bool }
	kinds := map[*profile.Function]kind{}
	gcFuncs, allocFuncs := GCFunctions(), AllocatorFunctions()
	of := func(fn *profile.Function) kind {
		if fn == nil {
			return kind{}
		}
		k, ok := kinds[fn]
		if !ok {
			k = kind{gc: MatchFunction(fn.Name, gcFuncs), alloc: MatchFunction(fn.Name, allocFuncs)}
			kinds[fn] = k
		}
		return k
	}
	for _, s := range p.Sample {
		v := abs(s.Value[vi])
		if v == 0 {
			continue
		}
		var gc, alloc bool
		for _, f := range Frames(s) {
			k := of(f.fn)
			gc, alloc = gc || k.gc, alloc || k.alloc
		}
		if gc {
			g.GC += v
		}
		if alloc {
			g.Allocator += v
		}
		if gc || alloc {
			g.Combined += v
		}
	}
	g.GCFraction = Share(g.GC, g.Total)
	g.AllocatorFraction = Share(g.Allocator, g.Total)
	g.CombinedFraction = Share(g.Combined, g.Total)
	return g, nil
}

// MatchFunction reports whether a function name matches one of patterns:
// a pattern ending in "*" matches the names it prefixes, any other only
// itself.
func MatchFunction(name string, patterns []string) bool {
	for _, pat := range patterns {
		if prefix, ok := strings.CutSuffix(pat, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if name == pat {
			return true
		}
	}
	return false
}
