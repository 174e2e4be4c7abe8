package gate

import (
	"cmp"
	"math"
	"slices"

	"github.com/perfscope/perfscope/internal/bench"
)

// DefaultExplainTop is how many functions, lines or allocation sites an
// explanation lists.
const DefaultExplainTop = 5

// An Explanation says where a benchmark's measure changed between the base
// and the head: the functions (or allocation sites) and source lines whose
// share of one operation changed most, exact numbers per operation. Its
// JSON field names are stable.
type Explanation struct {
	Package   string `json:"package"`
	Benchmark string `json:"benchmark"`
	// Unit is the measure explained: instructions/op, allocs/op or B/op.
	Unit string `json:"unit"`
	// Base and Head are one operation's totals of the profiles explained
	// and Delta is Head − Base: for instructions/op, the judged medians
	// (the median count's, or the mean of the two middle counts' for an
	// even number); for allocations, what every allocation recorded in a
	// run of their own adds up to per operation.
	Base  float64 `json:"base"`
	Head  float64 `json:"head"`
	Delta float64 `json:"delta"`
	// Functions are the functions (for allocations, the allocating
	// lines, charged to the innermost line of the module's own code)
	// whose per-operation values changed most, largest |delta| first.
	// Inlined code counts in the function it is inlined into; base and
	// head are matched by name, so a function that was renamed or
	// inlined away shows as gone from one side and new on the other.
	Functions []Change `json:"functions"`
	// Omitted is how many more functions changed; Rest is the sum of
	// their deltas, Delta less the listed functions' deltas.
	Omitted int     `json:"omitted"`
	Rest    float64 `json:"rest"`
	// Lines are the source lines whose per-operation instructions
	// changed most, where the source was at hand when counting, matched
	// between base and head by function and text, so a line that moved
	// is the same line. Empty for allocations (Functions are lines).
	Lines []Change `json:"lines,omitempty"`
}

// A Change is one function's, line's or allocation site's part of an
// Explanation: its value per operation on each side.
type Change struct {
	Function string `json:"function"`
	// File and Line locate a source line or allocation site; File is
	// relative to the module's root for the module's own files. Line is
	// the head's line (the base's when gone from the head).
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Source is the line's text, trimmed, when the file was at hand.
	Source string  `json:"source,omitempty"`
	Base   float64 `json:"base"`
	Head   float64 `json:"head"`
	Delta  float64 `json:"delta"`
	// Share is Delta's part of the Explanation's Delta (0.98 = 98%;
	// negative when it moved against the total); 0 when that is 0.
	Share float64 `json:"share"`
}

// Explain compares the per-operation profiles of one benchmark's
// instruction counts on the base and the head (bench.CountInstructions
// keeps them) and returns the top functions and source lines whose
// instructions per operation changed most; top ≤ 0 means
// DefaultExplainTop. It returns nil when a side has no count with a
// profile.
func Explain(base, head *bench.CountedBenchmark, top int) *Explanation {
	if top <= 0 {
		top = DefaultExplainTop
	}
	b, h := medianProfile(base), medianProfile(head)
	if b == nil || h == nil {
		return nil
	}
	e := &Explanation{Unit: bench.UnitInstructions, Base: b.total, Head: h.total, Delta: h.total - b.total}
	if r := head.Result; r != nil {
		e.Package, e.Benchmark = r.GetConfig("pkg"), r.Name.String()
	}
	e.Functions, e.Omitted = topChanges(b.funcs, h.funcs, e.Delta, top, func(fn string) Change { return Change{Function: fn} })
	e.Rest = rest(e.Delta, e.Functions)
	// Lines whose text is known, matched by it; a line's place is the
	// head's (the base's when gone from the head).
	place := make(map[lineKey]Change)
	for _, p := range []*meanProf{b, h} {
		for k, c := range p.lines {
			if c.Source != "" {
				place[k] = c
			}
		}
	}
	bl, hl := make(map[lineKey]float64), make(map[lineKey]float64)
	for k := range place {
		bl[k], hl[k] = b.lines[k].Base, h.lines[k].Base
	}
	e.Lines, _ = topChanges(bl, hl, e.Delta, top, func(k lineKey) Change { return place[k] })
	return e
}

// A lineKey matches a source line between the two sides: by function,
// file and text where the text is known, else by number.
type lineKey struct {
	fn, file, text string
	line           int
}

// meanProf is the mean of some of a benchmark's count profiles: per
// function and per line (a line's value in its Change's Base).
type meanProf struct {
	total float64
	funcs map[string]float64
	lines map[lineKey]Change
}

// medianProfile is the profile of a benchmark's median count (see
// bench.MiddleCounts), so that the explanation's totals are the medians
// the gate judged; nil when the benchmark has no count with a profile.
func medianProfile(cb *bench.CountedBenchmark) *meanProf {
	if cb == nil {
		return nil
	}
	ps := bench.MiddleCounts(cb.Counts)
	if len(ps) == 0 {
		return nil
	}
	m := &meanProf{funcs: make(map[string]float64), lines: make(map[lineKey]Change)}
	w := 1 / float64(len(ps))
	for _, c := range ps {
		m.total += c.PerOp * w
		for fn, v := range c.Profile.Funcs {
			m.funcs[fn] += v * w
		}
		for l, v := range c.Profile.Lines {
			text := c.Profile.Source[l]
			k := lineKey{fn: l.Func, file: l.File, text: text}
			if text == "" {
				k.line = l.Line
			}
			ch := m.lines[k]
			// Lines of the same text in one function are one; the
			// heaviest names them.
			if ch.Function == "" || math.Abs(v) > math.Abs(ch.Head) {
				ch.Function, ch.File, ch.Line, ch.Source, ch.Head = l.Func, l.File, l.Line, text, v
			}
			ch.Base += v * w
			m.lines[k] = ch
		}
	}
	return m
}

// topChanges ranks the keys of base and head by |head − base| and
// returns the top n as Changes (row gives each its names), with their
// shares of total, and how many more changed.
func topChanges[K comparable](base, head map[K]float64, total float64, n int, row func(K) Change) ([]Change, int) {
	type kv struct {
		k    K
		b, h float64
	}
	var all []kv
	for k, h := range head {
		if b := base[k]; h != b {
			all = append(all, kv{k, b, h})
		}
	}
	for k, b := range base {
		if _, ok := head[k]; !ok && b != 0 {
			all = append(all, kv{k, b, 0})
		}
	}
	slices.SortFunc(all, func(x, y kv) int {
		if c := cmp.Compare(math.Abs(y.h-y.b), math.Abs(x.h-x.b)); c != 0 {
			return c
		}
		return cmp.Compare(row(x.k).Function, row(y.k).Function)
	})
	out := make([]Change, 0, min(n, len(all)))
	for _, c := range all[:min(n, len(all))] {
		ch := row(c.k)
		ch.Base, ch.Head, ch.Delta = c.b, c.h, c.h-c.b
		if total != 0 {
			ch.Share = ch.Delta / total
		}
		out = append(out, ch)
	}
	return out, len(all) - len(out)
}

// explainCounts explains every instruction count the decision found
// changed beyond its threshold, from the counts of both sides.
func explainCounts(d *Decision, base, head []*bench.CountedBenchmark, top int) []Explanation {
	var out []Explanation
	for _, j := range d.Judgements {
		if j.Unit != bench.UnitInstructions || j.Verdict != Regression && j.Verdict != Improvement {
			continue
		}
		if e := Explain(countedOf(base, j.Package, j.Benchmark), countedOf(head, j.Package, j.Benchmark), top); e != nil {
			e.Package, e.Benchmark = j.Package, j.Benchmark
			out = append(out, *e)
		}
	}
	return out
}

// countedOf gathers the counts of one benchmark from every counting pass
// (a count that moved is counted again), nil when there are none.
func countedOf(all []*bench.CountedBenchmark, pkg, name string) *bench.CountedBenchmark {
	var out *bench.CountedBenchmark
	for _, c := range all {
		if c.Result == nil || c.Result.Name.String() != name || c.Result.GetConfig("pkg") != pkg || len(c.Counts) == 0 {
			continue
		}
		if out == nil {
			out = &bench.CountedBenchmark{Result: c.Result}
		}
		out.Counts = append(out.Counts, c.Counts...)
	}
	return out
}

// rest is what of delta the changes listed do not account for.
func rest(delta float64, listed []Change) float64 {
	for _, c := range listed {
		delta -= c.Delta
	}
	return delta
}
