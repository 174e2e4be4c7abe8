package analysis

import (
	"math"

	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/profiles"
)

// A SideBySide puts two analyses side by side, such as a service's naive
// and optimized variants under the same load. It compares one run of each,
// so its verdicts are directions, not statistics: for significance, compare
// repeated benchmarks (perfscope bench, perfscope compare).
type SideBySide struct {
	Base    Side     `json:"base"`
	Head    Side     `json:"head"`
	Metrics []Metric `json:"metrics"`
}

// A Side names one analysis of a SideBySide.
type Side struct {
	Name   string `json:"name"` // e.g. "naive", "optimized"
	RunID  string `json:"run_id"`
	Target string `json:"target"`
}

// A Metric is one number of both sides. Base and Head are nil when that
// side did not measure it.
type Metric struct {
	// Name is the metric's stable key: throughput_rps, p50_ms, p99_ms,
	// p999_ms, errors, alloc_objects_per_request,
	// alloc_bytes_per_request, cpu_seconds_per_request, gc_fraction,
	// allocator_fraction.
	Name string `json:"name"`
	// Unit is one of "req/s", "ms", "count", "objects", "bytes",
	// "seconds", "fraction".
	Unit string   `json:"unit"`
	Base *float64 `json:"base"`
	Head *float64 `json:"head"`
	// Ratio is Head / Base, when both are known and Base is not 0.
	Ratio *float64 `json:"ratio,omitempty"`
	// Better says which direction is an improvement: "higher" or "lower".
	Better string `json:"better"`
	// Verdict is "better", "worse" or "same" (within SameWithin of each
	// other), "" when a side is missing.
	Verdict string `json:"verdict,omitempty"`
}

// SameWithin is the relative difference under which a metric's two values
// count as the same: a single run of a load varies by a few percent.
const SameWithin = 0.03

// Beside puts base and head side by side.
func Beside(baseName string, base *profiles.Analysis, headName string, head *profiles.Analysis) *SideBySide {
	c := &SideBySide{Base: side(baseName, base), Head: side(headName, head)}
	add := func(name, unit, better string, get func(*profiles.Analysis) *float64) {
		m := Metric{Name: name, Unit: unit, Better: better, Base: get(base), Head: get(head)}
		if m.Base == nil && m.Head == nil {
			return
		}
		if m.Base != nil && m.Head != nil {
			m.Verdict = verdict(*m.Base, *m.Head, better)
			if *m.Base != 0 {
				r := *m.Head / *m.Base
				m.Ratio = &r
			}
		}
		c.Metrics = append(c.Metrics, m)
	}
	load := func(f func(*profiles.Analysis) float64) func(*profiles.Analysis) *float64 {
		return func(a *profiles.Analysis) *float64 {
			if a == nil || a.Run.Load == nil {
				return nil
			}
			return ptr(f(a))
		}
	}
	add("throughput_rps", "req/s", "higher", load(func(a *profiles.Analysis) float64 { return a.Run.Load.Throughput }))
	add("p50_ms", "ms", "lower", load(func(a *profiles.Analysis) float64 { return a.Run.Load.Latency.P50 }))
	add("p99_ms", "ms", "lower", load(func(a *profiles.Analysis) float64 { return a.Run.Load.Latency.P99 }))
	add("p999_ms", "ms", "lower", load(func(a *profiles.Analysis) float64 { return a.Run.Load.Latency.P999 }))
	add("errors", "count", "lower", load(func(a *profiles.Analysis) float64 { return float64(a.Run.Load.Failures) }))
	perReq := func(f func(*profiles.PerRequest) *float64) func(*profiles.Analysis) *float64 {
		return func(a *profiles.Analysis) *float64 {
			if a == nil || a.PerRequest == nil {
				return nil
			}
			return f(a.PerRequest)
		}
	}
	add("alloc_objects_per_request", "objects", "lower", perReq(func(p *profiles.PerRequest) *float64 { return p.AllocObjects }))
	add("alloc_bytes_per_request", "bytes", "lower", perReq(func(p *profiles.PerRequest) *float64 { return p.AllocBytes }))
	add("cpu_seconds_per_request", "seconds", "lower", perReq(func(p *profiles.PerRequest) *float64 { return p.CPUSeconds }))
	gc := func(f func(*profiles.GCShare) float64) func(*profiles.Analysis) *float64 {
		return func(a *profiles.Analysis) *float64 {
			if a == nil || a.CPU == nil || a.CPU.GC == nil || a.CPU.GC.Total == 0 {
				return nil
			}
			return ptr(f(a.CPU.GC))
		}
	}
	add("gc_fraction", "fraction", "lower", gc(func(g *profiles.GCShare) float64 { return g.GCFraction }))
	add("allocator_fraction", "fraction", "lower", gc(func(g *profiles.GCShare) float64 { return g.AllocatorFraction }))
	return c
}

func side(name string, a *profiles.Analysis) Side {
	s := Side{Name: name}
	if a != nil {
		s.RunID, s.Target = a.Run.ID, a.Run.Target
	}
	return s
}

func verdict(base, head float64, better string) string {
	if math.Abs(measure.Change(base, head)) < SameWithin {
		return "same"
	}
	if (head > base) == (better == "higher") {
		return "better"
	}
	return "worse"
}

func ptr(v float64) *float64 { return &v }
