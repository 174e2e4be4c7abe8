package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"golang.org/x/perf/benchfmt"
)

// A Measure is what a benchmark run measures besides allocations:
// wall time alone, or instruction counts under valgrind as well.
type Measure string

const (
	// MeasureTime is the ordinary run: sec/op, B/op, allocs/op.
	MeasureTime Measure = "time"
	// MeasureInstructions adds instructions/op, counted under valgrind,
	// to the ordinary run's measures.
	MeasureInstructions Measure = "instructions"
	// MeasureAuto is MeasureInstructions when valgrind is installed,
	// else MeasureTime.
	MeasureAuto Measure = "auto"
)

// ParseMeasure reads a --measure value; auto is accepted only when
// allowAuto, and resolved by ResolveMeasure.
func ParseMeasure(s string, allowAuto bool) (Measure, error) {
	switch m := Measure(s); m {
	case MeasureTime, MeasureInstructions:
		return m, nil
	case MeasureAuto:
		if allowAuto {
			return m, nil
		}
	}
	if allowAuto {
		return "", fmt.Errorf("--measure %q: want instructions, time or auto", s)
	}
	return "", fmt.Errorf("--measure %q: want instructions or time", s)
}

// ResolveMeasure turns auto into instructions when valgrind is
// installed and time when it is not; other measures stay.
func ResolveMeasure(m Measure) Measure {
	if m != MeasureAuto {
		return m
	}
	if _, err := FindValgrind(); err != nil {
		return MeasureTime
	}
	return MeasureInstructions
}

// A CountNote is what limited or prevented one benchmark's instruction
// count, for the reader of its results (report.CountNoteText writes it): a
// benchmark that could not be counted is measured by time only, and a
// count the allocation cap shortened is less precise.
type CountNote struct {
	// Benchmark is the benchmark's package and name:
	// "example.com/m BenchmarkParse".
	Benchmark string
	// BaseOnly is set, in a gate, on a note of the base that the head
	// does not share.
	BaseOnly bool
	// Err is why the benchmark could not be counted.
	Err error
	// Capped, when Err is nil, is how the allocation cap limited the
	// count.
	Capped *AllocationCap
}

// CountedNotes lists what limited or prevented counts, in order.
func CountedNotes(counted []*CountedBenchmark) []CountNote {
	var notes []CountNote
	for _, c := range counted {
		if noted(c) {
			notes = append(notes, countNote(c))
		}
	}
	return notes
}

// GateCountedNotes is CountedNotes for the two sides of a gate: a
// benchmark noted on both sides is noted once, as the head has it; one
// noted in the base only says so.
func GateCountedNotes(base, head []*CountedBenchmark) []CountNote {
	notes := CountedNotes(head)
	inHead := make(map[string]bool)
	for _, c := range head {
		inHead[countedName(c)] = noted(c)
	}
	for _, c := range base {
		if noted(c) && !inHead[countedName(c)] {
			n := countNote(c)
			n.BaseOnly = true
			notes = append(notes, n)
		}
	}
	return notes
}

func countedName(c *CountedBenchmark) string {
	name := "Benchmark" + string(c.Result.Name)
	if pkg := c.Result.GetConfig("pkg"); pkg != "" {
		name = pkg + " " + name
	}
	return name
}

// noted reports whether a count has something to say: it failed, or the
// allocation cap limited it.
func noted(c *CountedBenchmark) bool { return c.Err != nil || c.Capped != nil }

func countNote(c *CountedBenchmark) CountNote {
	n := CountNote{Benchmark: countedName(c), Err: c.Err}
	if c.Err == nil {
		n.Capped = c.Capped
	}
	return n
}

// instructionResults writes counted benchmarks in Go benchmark format and
// reads them back as results, so counts travel beside the ordinary run's.
func instructionResults(counted []*CountedBenchmark) ([]byte, *Results, error) {
	var buf bytes.Buffer
	if err := WriteInstructions(&buf, counted); err != nil {
		return nil, nil, err
	}
	res, err := Parse(bytes.NewReader(buf.Bytes()), "instruction counts")
	return buf.Bytes(), res, err
}

// addResults appends extra's results and unit metadata to r.
func addResults(r, extra *Results) {
	r.Results = append(r.Results, extra.Results...)
	if r.Units == nil {
		r.Units = make(benchfmt.UnitMetadataMap)
	}
	for k, v := range extra.Units {
		r.Units[k] = v
	}
}

// CountRun counts the instructions of every benchmark of a finished
// ordinary run (see CountBenchmarks): it builds each package's test
// binary in dir, counts reps times per benchmark, appends the counts to
// the run's results file and its Results, and adds to run.CountNotes each
// benchmark that could not be counted (it keeps its time) or whose count
// the allocation cap shortened. The error is for a failed build, a failed
// write or cancellation; counts made before it are kept. While counting,
// the results file is back under its partial name (see PartialSuffix); a
// cancelled count ends it with "interrupted: true" and sets
// run.Interrupted.
func CountRun(ctx context.Context, run *RunRecord, dir string, reps int, opts InstructionOptions, progress func(done, total int, name string)) error {
	tmp, err := os.MkdirTemp("", "perfscope-count-")
	if err != nil {
		return fmt.Errorf("create build directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	out, err := reopenResults(run.Path)
	if err != nil {
		return err
	}
	defer out.f.Close()
	var paths []string
	for _, p := range run.Packages {
		if p.Err == nil {
			paths = append(paths, p.ImportPath)
		}
	}
	bins, _, err := BuildTests(ctx, "work tree", dir, paths, tmp)
	var counted []*CountedBenchmark
	if err == nil {
		for _, bin := range bins {
			c, cerr := CountBenchmarks(ctx, bin, run.Results, reps, opts, progress)
			counted = append(counted, c...)
			if cerr != nil {
				err = cerr
				break
			}
		}
	}
	run.CountNotes = append(run.CountNotes, CountedNotes(counted)...)
	run.Counted = append(run.Counted, counted...)
	raw, res, werr := instructionResults(counted)
	if werr == nil {
		if _, werr = out.Write(raw); werr != nil {
			werr = fmt.Errorf("append instruction counts to %s: %w", run.Path, werr)
		}
	}
	run.Interrupted = run.Interrupted || ctx.Err() != nil
	if ferr := out.finish(run.Interrupted); werr == nil {
		werr = ferr
	}
	if werr != nil {
		return werr
	}
	addResults(run.Results, res)
	return err
}
