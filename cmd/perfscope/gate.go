package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/compare"
)

func init() { register(newGateCmd) }

func newGateCmd() *cobra.Command {
	var (
		baseRef, configPath, summary, saveDir, format, benchRE, benchtime string
		rounds, maxRounds                                                 int
		alpha, timePct                                                    float64
		allowDirty                                                        bool
	)
	formats := []string{"text", "json", "markdown"}
	c := &cobra.Command{
		Use:   "gate --base REF [packages]",
		Short: "Fail CI only on significant benchmark regressions against a base commit",
		Long: `gate compares the benchmarks of the working tree (head) with those of a base
commit. It checks REF out into a temporary git worktree, builds the test
binaries of both ("go test -c"), and runs them interleaved — base, head, head,
base, ... for --rounds rounds of one sample each — so that drift of a shared
machine hits both sides alike.

A benchmark metric regresses only if BOTH
  - its Mann-Whitney U-test p-value, after Holm–Bonferroni correction across
    all gated metrics, is below --alpha (default 0.01, so that a run raises
    a false alarm at most once in a hundred), and
  - its median worsens by more than the threshold: default 3% for sec/op and
    any increase for B/op and allocs/op.
The same statistics as benchstat (median, U-test) come from x/perf/benchmath.

Exit status: 0 no regression; 1 regression; 2 could not decide (too few
rounds for significance, a build failure, an unknown REF, a dirty work tree
without --allow-dirty, benchmarks that failed).

Configuration (thresholds per unit and per benchmark) is read from the "gate"
object of .perfscope.json in the current directory (or --config):
  {"gate": {"alpha": 0.01, "rounds": 20, "max_rounds": 40, "benchtime": "50ms",
            "threshold_pct": {"sec/op": 3, "B/op": 0, "allocs/op": 0},
            "benchmarks": [{"name": "Pad/.*", "unit": "sec/op", "threshold_pct": 10},
                           {"name": "Flaky", "ignore": true}]}}
"name" is a regular expression over the benchmark name without "Benchmark"
and the -N suffix; units left out of threshold_pct are reported, not gated.
Flags override the file.

Flags:
  --base REF        base commit, branch or tag (required)
  --rounds N        interleaved rounds, samples per side (default 20)
  --max-rounds N    while the samples are too noisy (or too few) to decide,
                    add rounds in batches up to N in total (default 40; set it
                    to --rounds for a fixed number)
  --benchtime T     time per sample (default 50ms)
  -b, --bench RE    benchmarks to run (default ".")
  --alpha A         family-wise significance level (default 0.01)
  --threshold PCT   sec/op threshold in percent (default 3)
  --allow-dirty     measure uncommitted changes as the head
  --summary FILE    also write a markdown summary for a PR comment
  --save DIR        keep the raw results as DIR/base.txt and DIR/head.txt (benchstat reads them)
  --config FILE     configuration file (default .perfscope.json)
  --format F        text (default), json or markdown`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, formats...); err != nil {
				return err
			}
			if baseRef == "" {
				return usagef("--base is required (for example --base main)")
			}
			cfg, err := compare.LoadGateConfig(configPath)
			if err != nil {
				return exitError{2, err.Error()}
			}
			f := cmd.Flags()
			if f.Changed("rounds") || cfg.Rounds == 0 {
				cfg.Rounds = rounds
			}
			if f.Changed("max-rounds") || cfg.MaxRounds == 0 {
				cfg.MaxRounds = max(maxRounds, cfg.Rounds)
			}
			if f.Changed("benchtime") || cfg.Benchtime == "" {
				cfg.Benchtime = benchtime
			}
			if f.Changed("bench") || cfg.Bench == "" {
				cfg.Bench = benchRE
			}
			if f.Changed("alpha") || cfg.Alpha == 0 {
				cfg.Alpha = alpha
			}
			cfg = cfg.WithDefaults()
			if f.Changed("threshold") {
				cfg.Thresholds["sec/op"] = timePct
			}
			if err := cfg.Validate(); err != nil {
				return usagef("%v", err)
			}
			if cfg.Rounds < 1 {
				return usagef("--rounds must be at least 1")
			}

			opts := bench.GateOptions{
				BaseRef: baseRef, Packages: args, AllowDirty: allowDirty,
				Rounds: cfg.Rounds, Bench: cfg.Bench, Benchtime: cfg.Benchtime,
			}
			opts.Extend = func(done int, base, head *bench.Results) int {
				d := compare.Decide(compare.Pair(base.Results, head.Results), cfg)
				more := cfg.MoreRounds(done, d)
				if more > 0 {
					clear := ""
					if opts.Progress != nil {
						clear = "\r\033[K" // over the progress line
					}
					fmt.Fprintf(os.Stderr, "%sgate: too noisy to decide after %d rounds; measuring %d more\n", clear, done, more)
				}
				return more
			}
			if stderrIsTerminal() {
				opts.Progress = terminalProgress(os.Stderr)
			} else {
				fmt.Fprintf(os.Stderr, "gate: building base %s and head, then %d interleaved rounds\n", baseRef, cfg.Rounds)
			}
			start := time.Now()
			run, err := bench.RunGate(cmd.Context(), opts)
			if opts.Progress != nil {
				fmt.Fprint(os.Stderr, "\r\033[K")
			}
			if run != nil && run.Raw != nil && saveDir != "" {
				if serr := saveRaw(saveDir, run); serr != nil {
					fmt.Fprintln(os.Stderr, "perfscope:", serr)
				}
			}
			if err != nil {
				return exitError{2, gateErrorLine(err, baseRef)}
			}
			for _, w := range append(run.Base.Warnings, run.Head.Warnings...) {
				fmt.Fprintln(os.Stderr, "skipped malformed line:", w)
			}
			d := compare.Decide(compare.Pair(run.Base.Results, run.Head.Results), cfg)
			head := "working tree"
			if run.Meta.Commit != "" {
				head += " (" + short(run.Meta.Commit)
				if run.Meta.Dirty {
					head += ", dirty"
				}
				head += ")"
			}
			rep := &compare.GateReport{
				Base: baseRef + " (" + short(run.BaseCommit) + ")", Head: head,
				Rounds: run.Rounds, Benchtime: cfg.Benchtime, Elapsed: time.Since(start), Decision: d,
			}
			for _, p := range run.MissingInBase {
				rep.Notes = append(rep.Notes, p+" does not exist in the base; its benchmarks are reported as added")
			}
			if len(d.Judgements) == 0 {
				return exitError{2, "no benchmarks ran: check --bench and the packages"}
			}
			if summary != "" {
				if err := writeFileWith(summary, rep.WriteMarkdown); err != nil {
					return exitError{2, err.Error()}
				}
			}
			out := cmd.OutOrStdout()
			switch format {
			case "json":
				err = rep.WriteJSON(out)
			case "markdown":
				err = rep.WriteMarkdown(out)
			default:
				err = rep.WriteText(out)
			}
			if err != nil {
				return err
			}
			if code := d.ExitCode(); code != 0 {
				return exitError{code: code}
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&baseRef, "base", "", "base git reference (required)")
	f.IntVar(&rounds, "rounds", compare.DefaultRounds, "interleaved rounds (samples per side)")
	f.IntVar(&maxRounds, "max-rounds", compare.DefaultMaxRounds, "keep adding rounds up to this many while too noisy to decide")
	f.StringVar(&benchtime, "benchtime", compare.DefaultBenchtime, "time per sample")
	f.StringVarP(&benchRE, "bench", "b", ".", "regular expression of benchmarks to run")
	f.Float64Var(&alpha, "alpha", compare.DefaultAlpha, "significance level")
	f.Float64Var(&timePct, "threshold", compare.DefaultTimePct, "sec/op regression threshold in percent")
	f.BoolVar(&allowDirty, "allow-dirty", false, "measure uncommitted changes as the head")
	f.StringVar(&summary, "summary", "", "write a markdown summary to this file")
	f.StringVar(&saveDir, "save", "", "keep raw results as DIR/base.txt and DIR/head.txt")
	f.StringVar(&configPath, "config", ".perfscope.json", "configuration file")
	addFormatFlag(c, &format, formats...)
	return c
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
	case errors.As(err, &be):
		return fmt.Sprintf("cannot decide: %s's tests do not build in the %s (%s):\n%s", be.Package, be.Tree, ref, be.Output)
	}
	return "cannot decide: " + err.Error()
}

func short(commit string) string { return commit[:min(12, len(commit))] }

func saveRaw(dir string, run *bench.GateRun) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save raw results: %w", err)
	}
	for name, data := range map[string][]byte{"base.txt": run.Raw.Base, "head.txt": run.Raw.Head} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("save raw results: %w", err)
		}
	}
	return nil
}

func writeFileWith(path string, write func(io.Writer) error) error {
	var b strings.Builder
	if err := write(&b); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}
