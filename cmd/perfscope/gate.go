package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/report"
)

func init() { register(newGateCmd) }

func newGateCmd() *cobra.Command {
	var (
		opts                                 bench.GateOptions
		set                                  gate.Settings
		configPath, summary, saveDir, format string
		// benchmem is go test's switch, always on here.
		benchmem bool
	)
	c := &cobra.Command{
		Use:   "gate --base REF [packages]",
		Short: "Fail CI only on significant benchmark regressions against a base commit",
		Long: `gate compares the benchmarks of the working tree (head) with those of a base
commit. It checks REF out into a temporary git worktree, builds the test
binaries of both ("go test -c"), and runs them interleaved — base, head, head,
base, ... one sample each per round — so that drift of a shared machine hits
both sides alike.

--measure instructions (the default when valgrind is installed; --measure
auto says which was used) also counts each benchmark's instructions/op under
valgrind on both sides, and decides on the exact measures, which the load of
a shared CI runner cannot change:
  - instructions/op regresses when it grows by more than 1% (one count per
    side, and two more of a count that moved, over four times the
    operations: the median of three decides; repeated counts agree within
    about 0.3%);
  - allocs/op and B/op regress on any increase when every sample of each side
    is the same number (otherwise, as for parallel benchmarks, by the test
    below);
  - wall time (5 rounds by default) is reported with its uncertainty and
    gates only when its noise allows: a time too noisy to decide never fails
    the gate unless --strict.
A benchmark that cannot run under valgrind is judged on time, with a note.
For every count that moved beyond its threshold, the report says where: the
functions and source lines whose instructions per operation moved most, from
the same runs; allocs/op and B/op that moved are explained by the allocation
sites that moved, from a run of each side recording every allocation.

--measure time is the gate on wall time alone. While the samples are too noisy
(or too few) to decide, it adds rounds in batches, up to --max-rounds, and a
benchmark metric regresses only if BOTH
  - its Mann-Whitney U-test p-value, after Holm–Bonferroni correction across
    all gated metrics, is below --alpha (default 0.01, so that a run raises
    a false alarm at most once in a hundred), and
  - its median worsens by more than the threshold: default 3% for sec/op and
    any increase for B/op and allocs/op.
The same statistics as benchstat (median, U-test) come from x/perf/benchmath.

REF is anything git reads as a commit: a branch, a tag, HEAD~1, a hash.
Flags may be spelled as go test spells them, with one dash: -bench Parse,
-benchtime=100x, -benchmem (always on here).

Exit status: 0 no regression (a pure improvement passes); 1 regression; 2
could not measure or decide (a build failure, an unknown REF, a dirty work
tree without --allow-dirty, benchmarks that failed, valgrind missing with
--measure instructions, or — measuring time alone, or with --strict — too few
rounds for significance). Benchmarks present on one side only are listed, not
failed.

Thresholds per unit and per benchmark are read from the "gate" object of
.perfscope.json (or --config); flags override the file:
  {"gate": {"measure": "auto", "strict": false, "alpha": 0.01, "rounds": 20,
            "max_rounds": 40, "benchtime": "50ms",
            "threshold_pct": {"instructions/op": 1, "sec/op": 3, "B/op": 0, "allocs/op": 0},
            "benchmarks": [{"name": "Pad/.*", "unit": "sec/op", "threshold_pct": 10},
                           {"name": "Flaky", "ignore": true}]}}
"name" is a regular expression over the benchmark name without "Benchmark"
and the -N suffix; units left out of threshold_pct are reported, not gated
(instructions/op is gated at 1% unless listed), and so is a custom unit whose
better direction is unknown (throughput units, "/s", are higher-is-better).`,
		Example: `  perfscope gate --base main ./...
  perfscope gate --base main -bench 'Parse$' -benchtime 100x ./internal/parse
  perfscope gate --base origin/main --summary gate.md --save gate-results
  perfscope gate --base HEAD~1 --rounds 40 --max-rounds 40 --format json`,
		Annotations: map[string]string{
			runsGoTest:           "gate",
			goTestHint + "count": "its samples per side are --rounds (and --max-rounds)",
			goTestHint + "run":   "it runs benchmarks only",
			goTestHint + "json":  "use --format json",
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json", "markdown"); err != nil {
				return err
			}
			if opts.BaseRef == "" {
				return usagef("--base is required (for example --base main)")
			}
			if !benchmem {
				return usagef("--benchmem=false: B/op and allocs/op are always measured")
			}
			cfg, err := gate.LoadConfig(configPath, set, cmd.Flags().Changed)
			if err != nil {
				return usagef("%v", err)
			}
			opts.Packages = args
			opts.CountProgress = func(side string, done, total int, name string) {
				if name != "" {
					fmt.Fprintf(os.Stderr, "%sgate: %s\n", clearLine(opts), report.CountingProgress(side, done, total, name))
				}
			}
			if stderrIsTerminal() {
				opts.Progress = terminalProgress(os.Stderr)
			} else {
				fmt.Fprintln(os.Stderr, report.GateStart(string(cfg.Measure), opts.BaseRef, cfg.Rounds))
			}
			rep, run, err := gate.Measure(cmd.Context(), opts, cfg, func(done, more int) {
				fmt.Fprintf(os.Stderr, "%s%s\n", clearLine(opts), report.GateExtending(done, more))
			})
			fmt.Fprint(os.Stderr, clearLine(opts))
			if run != nil && saveDir != "" {
				if serr := run.Raw.Save(saveDir); serr != nil {
					fmt.Fprintln(os.Stderr, "perfscope:", serr)
				}
			}
			if err != nil {
				return exitError{2, gateErrorLine(err, opts.BaseRef)}
			}
			for _, w := range append(run.Base.Warnings, run.Head.Warnings...) {
				fmt.Fprintln(os.Stderr, "skipped malformed line:", w)
			}
			if summary != "" {
				var b strings.Builder
				if err := report.WriteGate(&b, report.Markdown, rep); err != nil {
					return err
				}
				if err := os.WriteFile(summary, []byte(b.String()), 0o644); err != nil {
					return exitError{2, fmt.Sprintf("write summary: %v", err)}
				}
			}
			if err := report.WriteGate(cmd.OutOrStdout(), report.Format(format), rep); err != nil {
				return err
			}
			if code := rep.Decision.ExitCode(); code != 0 {
				return exitError{code: code}
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&opts.BaseRef, "base", "", "base commit: anything git reads as one, such as main, v1.2.0, HEAD~1 or a hash (required)")
	// The defaults depend on the measure, so the flags' own are zero and
	// their usage says what each measure takes (gate.LoadConfig).
	fl.IntVar(&set.Rounds, "rounds", 0, fmt.Sprintf("interleaved rounds (samples per side); default %d measuring time, %d counting instructions", gate.DefaultRounds, gate.DefaultInstructionRounds))
	fl.IntVar(&set.MaxRounds, "max-rounds", 0, fmt.Sprintf("while too noisy or too few to decide, add rounds up to this many in all (set it to --rounds for a fixed number); default %d measuring time, --rounds counting instructions", gate.DefaultMaxRounds))
	fl.StringVar(&set.Benchtime, "benchtime", gate.DefaultBenchtime, "time per sample")
	fl.StringVarP(&set.Bench, "bench", "b", ".", "regular expression of benchmarks to run")
	fl.BoolVar(&benchmem, "benchmem", true, "B/op and allocs/op: always measured (accepted as go test spells it)")
	fl.Float64Var(&set.Alpha, "alpha", gate.DefaultAlpha, "family-wise significance level")
	fl.Float64Var(&set.TimePct, "threshold", gate.DefaultTimePct, "sec/op regression threshold in percent")
	fl.StringVar(&set.Measure, "measure", gate.MeasureAuto, "instructions (count instructions/op under valgrind; decide on exact measures), time (wall time alone) or auto (instructions when valgrind is installed)")
	fl.BoolVar(&set.Strict, "strict", false, "with instruction counts, also fail (exit 2) when wall time is too noisy to decide")
	fl.BoolVar(&opts.AllowDirty, "allow-dirty", false, "measure uncommitted changes as the head")
	fl.StringVar(&summary, "summary", "", "also write a markdown summary for a PR comment to this file")
	fl.StringVar(&saveDir, "save", "", "keep the raw results as DIR/base.txt and DIR/head.txt (benchstat reads them)")
	fl.StringVar(&configPath, "config", ".perfscope.json", "configuration file")
	addFormatFlag(c, &format, "text", "json", "markdown")
	return c
}

// clearLine erases the progress line, when there is one.
func clearLine(opts bench.GateOptions) string {
	if opts.Progress == nil {
		return ""
	}
	return "\r\033[K"
}

// gateErrorLine turns a gate failure into the one line a person needs.
func gateErrorLine(err error, ref string) string {
	var be *bench.BuildError
	switch {
	case errors.Is(err, bench.ErrUnknownRef):
		return fmt.Sprintf("cannot decide: --base %s names no commit in this repository (fetch it, or check the spelling)", ref)
	case errors.Is(err, bench.ErrDirty):
		return "cannot decide: the work tree has uncommitted changes; commit them or pass --allow-dirty"
	case errors.Is(err, bench.ErrNotGit):
		return "cannot decide: not inside a git work tree; run the gate from a checkout"
	case errors.Is(err, gate.ErrNoBenchmarks):
		return err.Error()
	case errors.As(err, &be):
		return fmt.Sprintf("cannot decide: %s's tests do not build in the %s (%s):\n%s", be.Package, be.Tree, ref, be.Output)
	}
	return "cannot decide: " + err.Error()
}

// countProgress reports instruction counting, which takes seconds per
// benchmark under valgrind, one line per benchmark.
func countProgress(w io.Writer) func(done, total int, name string) {
	return func(done, total int, name string) {
		if name != "" {
			fmt.Fprintln(w, report.CountingProgress("", done, total, name))
		}
	}
}
