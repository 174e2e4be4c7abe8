package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/gitstate"
)

// ErrNoBenchmarks means the gate measured nothing: no benchmark matched.
var ErrNoBenchmarks = errors.New("no benchmarks ran: check --bench and the packages")

// Measure is the gate on a git repository: it builds the base
// (opts.BaseRef) and the working tree (see bench.BuildGate), measures them
// in interleaved rounds as Run extends them, counts both sides'
// instructions when cfg.Measure is instructions (with opts.Instructions;
// valgrind missing is an error wrapping bench.ErrNoValgrind), and reports
// the decision.
// opts.Bench and opts.Benchtime are taken from cfg. extending, if not nil,
// is told before each extension how many rounds are done and how many
// more follow. Once measuring began, the returned GateRun holds everything
// measured even when the error is not nil, so the raw results can be kept.
func Measure(ctx context.Context, opts bench.GateOptions, cfg Config, extending func(done, more int)) (*Report, *bench.GateRun, error) {
	cfg = cfg.withDefaults()
	opts.Bench, opts.Benchtime = cfg.Bench, cfg.Benchtime
	count := cfg.Measure == MeasureInstructions
	if count && opts.Instructions.Valgrind == "" {
		v, err := bench.FindValgrind()
		if err != nil {
			return nil, nil, err
		}
		opts.Instructions.Valgrind = v
	}
	if pct := cfg.Thresholds[bench.UnitInstructions]; count && opts.Instructions.TimingLimit == 0 && pct > 0 {
		// A count that thread hand-offs could move by a quarter of the
		// threshold is not decided on, as two counts that disagree by
		// that much are not.
		opts.Instructions.TimingLimit = pct / 100 / 4
	}
	start := time.Now()
	g, err := bench.BuildGate(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	defer g.Close()
	run := g.Run
	d, _, err := Run(ctx, func(ctx context.Context, more int) ([]Measurement, error) {
		if run.Rounds > 0 && extending != nil {
			extending(run.Rounds, more)
		}
		if err := g.Measure(ctx, more); err != nil {
			return nil, err
		}
		return Pair(run.Base.Results, run.Head.Results), nil
	}, cfg)
	if err != nil {
		return nil, run, err
	}
	var notes []string
	var countNotes []bench.CountNote
	var explanations []Explanation
	if count {
		if err := g.Count(ctx, DefaultCountReps, opts.Instructions, nil); err != nil {
			return nil, run, err
		}
		d = Decide(Pair(run.Base.Results, run.Head.Results), cfg)
		// A count that moved is counted again on both sides before it
		// decides (see RecountReps).
		type key struct{ pkg, name string }
		again := make(map[key]bool)
		for _, j := range d.Judgements {
			if j.Exact && j.Unit == bench.UnitInstructions && (j.Verdict == Regression || j.Verdict == Improvement) {
				again[key{j.Package, j.Benchmark}] = true
			}
		}
		if len(again) > 0 {
			// One pass per count: each pass adds one result per
			// benchmark, so the decision's median is the counts'.
			recount := opts.Instructions
			if recount.Target <= 0 {
				recount.Target = bench.DefaultCountTarget
			}
			recount.Target *= RecountScale
			if recount.Timeout <= 0 {
				recount.Timeout = bench.DefaultCountTimeout
			}
			recount.Timeout *= RecountScale
			for range RecountReps {
				if err := g.Count(ctx, 1, recount, func(pkg, name string) bool { return again[key{pkg, name}] }); err != nil {
					return nil, run, err
				}
			}
			d = Decide(Pair(run.Base.Results, run.Head.Results), cfg)
		}
		countNotes = bench.GateCountedNotes(run.CountedBase, run.CountedHead)
		explanations = explainCounts(d, run.CountedBase, run.CountedHead, DefaultExplainTop)
	}
	if len(d.Judgements) == 0 {
		return nil, run, ErrNoBenchmarks
	}
	allocs, allocNotes, err := explainAllocations(ctx, g, d, DefaultExplainTop)
	if err != nil {
		return nil, run, err
	}
	explanations = append(explanations, allocs...)
	notes = append(notes, allocNotes...)
	head := "working tree"
	if c := run.Meta.Commit; c != "" {
		head += " (" + gitstate.Short(c)
		if run.Meta.Dirty {
			head += ", dirty"
		}
		head += ")"
	}
	r := &Report{
		Base: opts.BaseRef + " (" + gitstate.Short(run.BaseCommit) + ")", Head: head,
		Measure: cfg.Measure, Rounds: run.Rounds, Benchtime: cfg.Benchtime, Elapsed: time.Since(start), Decision: d,
		CountNotes: countNotes, Notes: notes, Explanations: explanations,
	}
	for _, p := range run.MissingInBase {
		r.Notes = append(r.Notes, p+" does not exist in the base; its benchmarks are reported as added")
	}
	if cold := run.Raw.Cold; len(cold) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("measured warm, each run twice per process and the first discarded: %s (a first operation took longer than -benchtime %s)", strings.Join(cold, ", "), cfg.Benchtime))
	}
	return r, run, nil
}
