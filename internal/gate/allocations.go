package gate

import (
	"context"
	"fmt"
	"math"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/profiles"
)

// Units of allocation an explanation can be about, and the memory
// profile's sample type of each.
var allocSampleTypes = map[string]string{"allocs/op": "alloc_objects", "B/op": "alloc_space"}

// ExplainAllocations compares what one operation allocates at each site
// on the base and the head (bench.RecordAllocations) and returns where
// unit (allocs/op or B/op) changed: the sites — the innermost line of the
// module's own code on each allocating stack (profiles.AttributeUser) —
// whose objects or bytes per operation moved most; top ≤ 0 means
// DefaultExplainTop.
func ExplainAllocations(base, head *bench.AllocRun, unit string, top int) (*Explanation, error) {
	if top <= 0 {
		top = DefaultExplainTop
	}
	if _, ok := allocSampleTypes[unit]; !ok {
		return nil, fmt.Errorf("%s is not a unit of allocation", unit)
	}
	b, err := allocSites(base, unit)
	if err != nil {
		return nil, err
	}
	h, err := allocSites(head, unit)
	if err != nil {
		return nil, err
	}
	e := &Explanation{Unit: unit}
	for _, v := range b {
		e.Base += v
	}
	for _, v := range h {
		e.Head += v
	}
	e.Delta = e.Head - e.Base
	e.Functions, e.Omitted = topChanges(b, h, e.Delta, top, func(k siteKey) Change {
		return Change{Function: k.fn, File: k.file, Line: k.line}
	})
	e.Rest = rest(e.Delta, e.Functions)
	return e, nil
}

// A siteKey is an allocation site, its file relative to the module's root
// for the module's own files, so that the base's and the head's match.
type siteKey struct {
	fn, file string
	line     int
}

// allocSites is what one operation of r allocates at each site, in unit:
// the long run's profile less the short one's, divided by r.N.
func allocSites(r *bench.AllocRun, unit string) (map[siteKey]float64, error) {
	c := profiles.NewClassifier(r.Module, r.Short, r.Long)
	out := make(map[siteKey]float64)
	for _, p := range []struct {
		prof *profile.Profile
		sign float64
	}{{r.Short, -1}, {r.Long, 1}} {
		t, err := profiles.Sites(p.prof, "alloc_objects", "alloc_space", profiles.AttributeUser, c)
		if err != nil {
			return nil, err
		}
		for _, s := range t.Rows {
			k := siteKey{fn: s.Function, file: bench.ModuleRelative(s.File, r.Root), line: int(s.Line)}
			v := float64(s.Count)
			if unit == "B/op" {
				v = float64(s.Amount)
			}
			out[k] += p.sign * v / float64(r.N)
		}
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out, nil
}

// allocOperations is how many operations an allocation recording counts
// for a benchmark taking secPerOp (NaN or 0 when unknown): about half a
// second of them, between minAllocOps and maxAllocOps.
func allocOperations(secPerOp float64) int {
	const minAllocOps, maxAllocOps = 8, 1000
	if !(secPerOp > 0) {
		return 100
	}
	return int(math.Max(minAllocOps, math.Min(maxAllocOps, math.Ceil(0.5/secPerOp))))
}

// explainAllocations records, on both sides, the allocations of every
// benchmark whose allocs/op or B/op the decision found changed beyond its
// threshold, and explains each such unit. A benchmark whose allocations
// could not be recorded gets a note instead; the error is only for
// cancellation.
func explainAllocations(ctx context.Context, g *bench.GateBuild, d *Decision, top int) ([]Explanation, []string, error) {
	type key struct{ pkg, name string }
	var order []key
	units := make(map[key][]string)
	secPerOp := make(map[key]float64)
	for _, j := range d.Judgements {
		k := key{j.Package, j.Benchmark}
		if j.Unit == "sec/op" {
			secPerOp[k] = math.Max(j.BaseMedian, j.HeadMedian)
		}
		if _, ok := allocSampleTypes[j.Unit]; !ok || j.Verdict != Regression && j.Verdict != Improvement {
			continue
		}
		if units[k] == nil {
			order = append(order, k)
		}
		units[k] = append(units[k], j.Unit)
	}
	var out []Explanation
	var notes []string
	for _, k := range order {
		baseBin, headBin, ok := g.Binaries(k.pkg)
		if !ok {
			continue
		}
		es, note, err := explainAllocationsOf(ctx, baseBin, headBin, k.pkg, k.name, units[k], allocOperations(secPerOp[k]), top)
		if err != nil {
			return out, notes, err
		}
		out = append(out, es...)
		if note != "" {
			notes = append(notes, note)
		}
	}
	return out, notes, nil
}

// explainAllocationsOf records the allocations of benchmark name of
// package pkg over n operations with both binaries and explains each of
// units (allocs/op, B/op). What could not be recorded or explained is a
// note; the error is only for cancellation.
func explainAllocationsOf(ctx context.Context, baseBin, headBin bench.Binary, pkg, name string, units []string, n, top int) ([]Explanation, string, error) {
	base, err := bench.RecordAllocations(ctx, baseBin, name, n)
	var head *bench.AllocRun
	if err == nil {
		head, err = bench.RecordAllocations(ctx, headBin, name, n)
	}
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	var out []Explanation
	for _, unit := range units {
		var e *Explanation
		if err == nil {
			e, err = ExplainAllocations(base, head, unit, top)
		}
		if err != nil {
			return out, fmt.Sprintf("where %s Benchmark%s's allocations changed is not known: %v", pkg, name, err), nil
		}
		e.Package, e.Benchmark = pkg, name
		out = append(out, *e)
	}
	return out, "", nil
}
