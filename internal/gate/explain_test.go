package gate

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/bench"
)

// mixRepo is a git repository of one module whose one benchmark calls two
// functions running the same loop, hot and steady, for given lengths.
type mixRepo struct {
	t   *testing.T
	dir string
}

func (r mixRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes the module with hot's loop of hotIters and commits it.
// Lines are added above hot as its loop grows, so that its lines move and
// an explanation must match them by their text.
func (r mixRepo) commit(hotIters int, msg string) {
	r.t.Helper()
	src := `package scratch

import "testing"

var total int
PAD
//go:noinline
func hot(n int) int {
	s := 0
	for i := range n {
		s += i % 7
	}
	return s
}

//go:noinline
func steady(n int) int {
	s := 0
	for i := range n {
		s += i % 7
	}
	return s
}

func BenchmarkMix(b *testing.B) {
	for b.Loop() {
		total += hot(HOT) + steady(10000)
	}
}
`
	pad := strings.Repeat("\n// grown\n", (hotIters-10000)/100)
	r.commitSource("mix_test.go", strings.NewReplacer("HOT", strconv.Itoa(hotIters), "PAD", pad).Replace(src), msg)
}

// commitSource commits the module with src as its one test file, file.
func (r mixRepo) commitSource(file, src, msg string) {
	r.t.Helper()
	for name, content := range map[string]string{"go.mod": "module example.com/scratch\n\ngo 1.26\n", file: src} {
		if err := os.WriteFile(filepath.Join(r.dir, name), []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
}

// TestExplainNamesTheFunction is the gate's explanation end to end: on a
// module whose commits make its benchmark's operation 1%, 2% and 5%
// longer, all of it in one function, the gate names that function first
// with its exact instruction delta, and its loop's line first among the
// lines, though the line moved. hot's own delta is exact at any load
// (2,800 instructions an operation per 1%). The benchmark's total delta
// also carries what the runtime does on a timing of its own — the
// background scavenger releasing pages that later allocations then search
// for, stacks shrunk or not by testing's own collection before the
// operations, a thread started while a system call blocks: ten to a
// hundred thousand instructions in some runs and not in others, which a
// count of about 200 million instructions spreads over some 700
// operations. A count that moved is counted twice more a side, over
// four times the operations, and the median count is judged and
// explained: a quarter of that noise an operation, and one disturbed run
// left out. So counted, hot held 99.74% to 100.39% of the total delta in
// 18 shares, all within 0.5% (RUNS=3 bench/explain/run.sh: nine quiet,
// nine beside two burners); with one count a side over ~700 operations,
// 24 of 30 were within 0.5% (99.11% to 100.88%). The test asserts 2%, not
// the goal's 0.5%: beside heavier load than two burners more runs can be
// disturbed than a median of three leaves out.
func TestExplainNamesTheFunction(t *testing.T) {
	valgrind, err := bench.FindValgrind()
	if err != nil {
		if os.Getenv("PERFSCOPE_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	r := mixRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	// hot and steady run 10,000 iterations each: 2% more work in all is
	// 400 more in hot.
	r.commit(10000, "first")
	first := r.git("rev-parse", "HEAD")
	cfg := Config{Measure: MeasureInstructions, Rounds: 1, MaxRounds: 1, Benchtime: "20x",
		Thresholds: map[string]float64{"instructions/op": 0.5}}
	opts := bench.GateOptions{Dir: r.dir, BaseRef: first, Instructions: bench.InstructionOptions{Valgrind: valgrind}}
	for _, pct := range []int{1, 2, 5} {
		r.commit(10000+200*pct, strconv.Itoa(pct)+"% more work in hot")
		rep, _, err := Measure(context.Background(), opts, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		var judged *Judgement
		for i, j := range rep.Decision.Judgements {
			if j.Unit == bench.UnitInstructions {
				judged = &rep.Decision.Judgements[i]
			}
		}
		if judged == nil || judged.Verdict != Regression {
			t.Fatalf("%d%% more work: judged %+v, want a regression", pct, judged)
		}
		if len(rep.Explanations) != 1 {
			t.Fatalf("%d%% more work: %d explanations, want 1: %+v", pct, len(rep.Explanations), rep.Explanations)
		}
		e := rep.Explanations[0]
		if !strings.HasPrefix(e.Benchmark, "Mix") || e.Unit != bench.UnitInstructions || len(e.Functions) == 0 {
			t.Fatalf("%d%% more work: explanation %+v", pct, e)
		}
		// A count that moved is counted three times a side: the
		// explanation's totals are the judged medians (which are
		// rounded to whole instructions).
		if math.Abs(e.Delta-(judged.HeadMedian-judged.BaseMedian)) > 1 {
			t.Errorf("%d%% more work: explained a delta of %.1f, the gate judged %v → %v", pct, e.Delta, judged.BaseMedian, judged.HeadMedian)
		}
		if got := e.Delta / e.Base; math.Abs(got-float64(pct)/100) > 0.002 {
			t.Errorf("%d%% more work: the count grew %.2f%%", pct, 100*got)
		}
		f := e.Functions[0]
		t.Logf("%d%% more work: %+.1f instructions/op (%+.2f%%); first %s %+.1f (%.2f%% of it)", pct, e.Delta, 100*e.Delta/e.Base, f.Function, f.Delta, 100*f.Share)
		// hot's own delta is exact: 200 iterations of 14 instructions
		// per 1%. Its share of the total is what the runtime's timing
		// can move (see above), so the goal of 0.5% is not asserted here.
		if f.Function != "example.com/scratch.hot" || f.Delta != float64(2800*pct) || math.Abs(f.Share-1) > 0.02 {
			t.Errorf("%d%% more work: first function %s %+.1f with %.2f%% of the delta, want example.com/scratch.hot %+d with nearly all of it: %+v", pct, f.Function, f.Delta, 100*f.Share, 2800*pct, e.Functions)
		}
		if len(e.Lines) == 0 || e.Lines[0].Function != "example.com/scratch.hot" || e.Lines[0].File != "mix_test.go" || e.Lines[0].Source != "s += i % 7" {
			t.Errorf("%d%% more work: lines %+v, want hot's loop first", pct, e.Lines)
		}
	}
}

// TestExplainAllocations is the explanation of allocation changes end to
// end: a commit adding a 128-byte allocation in one function is explained
// by that function's line, one object and 128 bytes an operation more.
func TestExplainAllocations(t *testing.T) {
	r := mixRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	src := `package scratch

import "testing"

var sink, other []byte

func keep() { sink = make([]byte, 64) }

func grow() {
	GROW
}

func BenchmarkAlloc(b *testing.B) {
	for b.Loop() {
		keep()
		grow()
	}
}
`
	r.commitSource("alloc_test.go", strings.Replace(src, "GROW", "", 1), "first")
	r.commitSource("alloc_test.go", strings.Replace(src, "GROW", "other = make([]byte, 128)", 1), "grow allocates")
	// The testing package reports whole bytes an operation: over 100
	// operations, a runtime allocation of 100 bytes in one round made
	// its B/op differ from the others', and three rounds that differ
	// cannot tell a change. Over 10,000 it takes 10,000 bytes.
	cfg := Config{Measure: MeasureTime, Rounds: 3, MaxRounds: 3, Benchtime: "10000x",
		Thresholds: map[string]float64{"allocs/op": 0, "B/op": 0}}
	rep, _, err := Measure(context.Background(), bench.GateOptions{Dir: r.dir, BaseRef: "HEAD~1"}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"allocs/op": 1, "B/op": 128}
	for _, e := range rep.Explanations {
		d, ok := want[e.Unit]
		if !ok {
			t.Errorf("explained %s", e.Unit)
			continue
		}
		delete(want, e.Unit)
		if len(e.Functions) == 0 {
			t.Errorf("%s: no sites: %+v", e.Unit, e)
			continue
		}
		f := e.Functions[0]
		// The runtime's own allocations of a run (a few, at times
		// that depend on timing, more on a busy machine: up to 8% of
		// the site's bytes) are charged to the runtime's lines; less
		// those, the total is the site's, within a few per cent.
		module := e.Delta
		for _, c := range e.Functions[1:] {
			if strings.HasPrefix(c.Function, "runtime.") {
				module -= c.Delta
			}
		}
		if f.Function != "example.com/scratch.grow" || f.File != "alloc_test.go" || f.Line != 10 || f.Delta != d || f.Base != 0 || math.Abs(module-d) > 0.05*d {
			t.Errorf("%s: delta %v (%v less the runtime's own), first site %+v; want %v at example.com/scratch.grow alloc_test.go:10, and about as much in all", e.Unit, e.Delta, module, f, d)
		}
	}
	if len(want) > 0 {
		t.Errorf("not explained: %v (explanations %+v, notes %v)", want, rep.Explanations, rep.Notes)
	}
}

// TestExplainMatches checks the matching rules on profiles written out:
// functions by name (a renamed one is gone from one side and new on the
// other), lines by function, file and text though their numbers moved,
// and several counts of a side by their median: the two middle counts'
// mean, or the middle count alone.
func TestExplainMatches(t *testing.T) {
	line := func(fn string, n int) bench.SourceLine { return bench.SourceLine{Func: fn, File: "x.go", Line: n} }
	count := func(perOp, a float64, renamed string, loop int) bench.InstructionCount {
		return bench.InstructionCount{PerOp: perOp, Profile: &bench.OpProfile{
			Funcs:  map[string]float64{"a": a, "b": 50, renamed: perOp - a - 50},
			Lines:  map[bench.SourceLine]float64{line("a", loop): a, line("b", 9): 50},
			Source: map[bench.SourceLine]string{line("a", loop): "s += i % 7"},
		}}
	}
	base := &bench.CountedBenchmark{Counts: []bench.InstructionCount{count(160, 100, "old", 3)}}
	head := &bench.CountedBenchmark{Counts: []bench.InstructionCount{count(190, 128, "new", 5), count(194, 132, "new", 5)}}
	e := Explain(base, head, 2)
	if e == nil {
		t.Fatal("no explanation")
	}
	if e.Base != 160 || e.Head != 192 || e.Delta != 32 {
		t.Errorf("totals %v → %v (%v), want 160 → 192 (32)", e.Base, e.Head, e.Delta)
	}
	want := []Change{{Function: "a", Base: 100, Head: 130, Delta: 30, Share: 30.0 / 32}, {Function: "new", Base: 0, Head: 12, Delta: 12, Share: 12.0 / 32}}
	if len(e.Functions) != 2 || e.Functions[0] != want[0] || e.Functions[1] != want[1] || e.Omitted != 1 || e.Rest != -10 {
		t.Errorf("functions %+v, omitted %d, rest %v; want %+v, 1 omitted (old, -10)", e.Functions, e.Omitted, e.Rest, want)
	}
	wantLine := Change{Function: "a", File: "x.go", Line: 5, Source: "s += i % 7", Base: 100, Head: 130, Delta: 30, Share: 30.0 / 32}
	if len(e.Lines) != 1 || e.Lines[0] != wantLine {
		t.Errorf("lines %+v, want only %+v", e.Lines, wantLine)
	}
	// Of three counts, the middle one explains; the count a timing of
	// the runtime's added 40 instructions to is left out.
	head.Counts = append(head.Counts, count(234, 172, "new", 5))
	if e := Explain(base, head, 1); e == nil || e.Head != 194 || len(e.Functions) != 1 || e.Functions[0].Head != 132 {
		t.Errorf("three counts explained as %+v, want the 194-instruction count's", e)
	}
	if Explain(base, &bench.CountedBenchmark{}, 0) != nil {
		t.Error("explained a side without counts")
	}
}
