package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
)

func init() { register(newBisectCmd) }

func newBisectCmd() *cobra.Command {
	var (
		opts               gate.BisectOptions
		measure, threshold string
		format             string
		rec                recordFlags
		quiet              bool
	)
	formats := []string{"text", "json", "markdown"}
	c := &cobra.Command{
		Use:   "bisect --good REF --bad REF --bench REGEX [packages]",
		Short: "Find the commit at which a benchmark's instruction count (or allocations) moved",
		Long: `bisect finds the first commit between a good and a bad one at which the
benchmarks --bench matches moved beyond --threshold from the good commit, in
the direction they moved from good to bad. It walks bad's first-parent path,
the commits "git rev-list --first-parent GOOD..BAD" lists, as git bisect does.

Each commit it needs is checked out into a temporary git worktree (the work
tree is not touched, and may have changes), its tests built ("go test -c")
and its benchmarks measured once: instructions/op is counted under valgrind
(see "--measure instructions" in the README), allocs/op and B/op are read
from one ordinary run. These measures are exact, the same on a quiet machine
and a busy one, so one measurement a commit decides, and a binary search
needs about log2(n) + 2 builds for n commits.

It measures good and bad first, every benchmark --bench matches, and then
follows those that moved beyond the threshold; when none did, it says so and
exits 1. A commit that does not build, or whose test binary lacks a followed
benchmark (or whose count fails), is skipped, named in the output, and a
neighbour measured instead, as "git bisect skip" does; when skipped commits
lie right before the first bad one, all of them are listed: the change began
at one of them.

The answer is the first bad commit (hash, subject), its measure and the last
good commit's before it, how many commits were built, measured and skipped,
and every step. Each commit measured is recorded in the store (--db) as a
benchmark run of that commit holding the measure alone, so 'perfscope
history' and the dashboard show the series around the change.

REF is anything git reads as a commit: a branch, a tag, HEAD~8, a hash.
--good must be an ancestor of --bad. Flags may be spelled as go test spells
them, with one dash: -bench Parse, -benchtime=100x.

Exit status: 0 found (exactly, or among skipped commits); 1 nothing to find
(no benchmark moved beyond the threshold between good and bad); 2 refused or
could not measure: an unknown REF, a good commit that is not an ancestor of
the bad one, a pattern that matches no benchmark, a benchmark at one end only,
good or bad that does not build, valgrind missing with --measure
instructions. Refused input records nothing.`,
		Example: `  perfscope bisect --good HEAD~4 --bad main -bench 'Parse/size=1000$' ./internal/parse
  perfscope bisect --good HEAD~4 --bad HEAD --measure allocs --threshold 0 -b 'Parse/size=10$' --db bisect.db --format json ./internal/parse`,
		Annotations: map[string]string{
			runsGoTest:           "bisect",
			goTestHint + "count": "each commit is measured once: the measures it follows are exact",
			goTestHint + "run":   "it runs benchmarks only",
			goTestHint + "json":  "use --format json",
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, formats...); err != nil {
				return err
			}
			unit, err := gate.BisectUnit(measure)
			if err != nil {
				return usagef("%v", err)
			}
			if opts.Threshold, err = parseThreshold(threshold); err != nil {
				return usagef("%v", err)
			}
			opts.Unit, opts.Packages = unit, args
			if !quiet {
				opts.Progress = func(s gate.BisectStep) { fmt.Fprintln(os.Stderr, report.BisectProgress(s)) }
			}
			r, err := gate.Bisect(cmd.Context(), opts)
			var ie *gate.BisectInputError
			if errors.As(err, &ie) {
				return exitError{2, ie.Error()}
			}
			if r != nil {
				rec.withStore(cmd.Context(), os.Stderr, func(ctx context.Context, st recorder) error {
					for _, s := range r.Steps {
						if s.Record == nil {
							continue
						}
						saved, err := store.BenchRunOf(s.Record)
						if err == nil {
							_, err = st.SaveBenchRun(ctx, saved)
						}
						if err != nil {
							return err
						}
					}
					return nil
				})
			}
			switch {
			case err != nil && cmd.Context().Err() != nil:
				return exitError{130, "interrupted: the commits measured until then are recorded in the store"}
			case err != nil:
				return exitError{2, "cannot bisect: " + err.Error()}
			}
			if err := report.WriteBisect(cmd.OutOrStdout(), report.Format(format), r); err != nil {
				return err
			}
			if code := r.ExitCode(); code != 0 {
				return exitError{code: code}
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Good, "good", "", "a commit where the measure was as wanted: a branch, tag, HEAD~8 or hash (required)")
	f.StringVar(&opts.Bad, "bad", "", "a later commit where it is not, with --good among its ancestors (required)")
	f.StringVarP(&opts.Bench, "bench", "b", "", "regular expression of the benchmarks to follow, as go test -bench reads it (required)")
	f.StringVar(&measure, "measure", "instructions", "what to follow: instructions (instructions/op, counted under valgrind), allocs (allocs/op) or bytes (B/op)")
	f.StringVar(&threshold, "threshold", "1%", "a commit is bad when its measure moved more than this from the good commit's (0: any change)")
	f.StringVar(&opts.Benchtime, "benchtime", gate.DefaultBenchtime, "time per ordinary run, which finds the benchmarks and measures allocations")
	f.BoolVarP(&quiet, "quiet", "q", false, "no line per commit on stderr")
	addFormatFlag(c, &format, formats...)
	rec.register(f, "each commit measured")
	return c
}

// parseThreshold reads --threshold: a percentage, with or without "%".
func parseThreshold(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || v < 0 || v != v {
		return 0, fmt.Errorf("--threshold %q: want a percentage such as 1%% or 0.5", s)
	}
	return v / 100, nil
}
