package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/units"
)

func init() { register(newHistoryCmd) }

func newHistoryCmd() *cobra.Command {
	var (
		bench, pkg, unit, since string
		branch, machine, db     string
		format                  string
		alpha                   float64
		window                  int
		changedOnly             bool
	)
	formats := []string{"text", "json"}
	c := &cobra.Command{
		Use:   "history",
		Short: "Per-commit benchmark history, with the commits where a metric changed",
		Long: `history prints, for every recorded benchmark and metric, one line per commit:
the median of its samples with a 95% confidence interval (benchstat's summary),
the change from the previous commit with its Mann-Whitney U-test p-value, and
a mark where the metric changed.

A series is one metric on one branch and one machine: a change is always
against the commit before on the same branch, measured on the same machine
(commits in committer-date order within the branch).

A commit of a noisy measure (sec/op) is marked only when both hold: the U-test
separates its samples from the previous commit's (p <= --alpha), and the
median moved more than 4 times the benchmark's typical commit-to-commit
movement (the median absolute change over the series, the steps found left
out). The second test keeps run-to-run noise (machine load, CPU frequency)
from being marked; such measures need at least 5 commits before anything is
marked. Exact measures (instructions/op) are marked when they move by more
than 1%, and allocs/op and B/op when the U-test separates the samples and
they do not overlap, from the second commit on.

Each series is judged over its latest --window commits, as the dashboard
judges them (100 unless set; 0 for all).

Results come from 'perfscope bench', which records every sample per commit.
Runs made on a work tree with uncommitted changes show as COMMIT+dirty.`,
		Example: `  perfscope history --pkg example.com/svc --unit sec/op --since 30d
  perfscope history --bench 'Parse/size=1000' --changed
  perfscope history --db postgres://perf@db/perfscope --machine ci-runner-1 --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, formats...); err != nil {
				return err
			}
			for flag, re := range map[string]string{"--bench": bench, "--pkg": pkg} {
				if _, err := regexp.Compile(re); err != nil {
					return usagef("%s: %v", flag, err)
				}
			}
			if window < 0 {
				return usagef("--window %d: a number of commits, or 0 for all", window)
			}
			if window == 0 {
				window = history.AllCommits
			}
			if !(alpha > 0 && alpha < 1) {
				return usagef("--alpha %v: must be between 0 and 1", alpha)
			}
			f := store.Filter{Branch: branch, Machine: machine, Package: pkg, Name: bench, Unit: unit}
			if since != "" {
				t, err := units.ParseInstant(since, time.Now())
				if err != nil {
					return usagef("--since: %v", err)
				}
				f.Since = t
			}

			ctx := cmd.Context()
			s, err := store.OpenReadOnly(ctx, db)
			if err != nil {
				return storeOpenError(err, "record results first (perfscope bench ./...), or pass --db")
			}
			defer s.Close()

			res, err := history.Changes(ctx, s, history.Query{Filter: f, Window: window, Options: history.Options{Alpha: alpha}})
			if errors.Is(err, history.ErrNoBenchmarks) || err == nil && len(res.Series) == 0 {
				return noHistory(cmd, s, db)
			}
			if err != nil {
				return err
			}
			return report.WriteHistory(cmd.OutOrStdout(), report.Format(format), res, changedOnly)
		},
	}
	fl := c.Flags()
	fl.StringVar(&bench, "bench", "", "benchmarks whose full name matches this regular expression")
	fl.StringVar(&pkg, "pkg", "", "packages whose import path matches this regular expression")
	fl.StringVar(&unit, "unit", "", "one metric only (sec/op, B/op, allocs/op, or a custom unit)")
	fl.StringVar(&since, "since", "", "commits from a date (2025-03-01) or a duration ago (72h, 30d, 2w)")
	fl.StringVar(&branch, "branch", "", "runs on this branch only")
	fl.StringVar(&machine, "machine", "", "runs on this hostname only")
	fl.Float64Var(&alpha, "alpha", 0.05, "significance level of the U-test between adjacent commits")
	fl.IntVar(&window, "window", history.DefaultWindow, "judge each series' latest N commits (0: all), as the dashboard does")
	fl.BoolVar(&changedOnly, "changed", false, "list only the commits marked changed")
	fl.StringVar(&db, "db", "", "SQLite file or postgres:// URL of the store (default ~/.perfscope/perfscope.db)")
	addFormatFlag(c, &format, formats...)
	return c
}

// historyFilters are the flags of history that select what it shows.
var historyFilters = []string{"bench", "pkg", "unit", "branch", "machine", "since"}

// benchLister lists the recorded benchmarks, for noHistory.
type benchLister interface {
	Benchmarks(ctx context.Context, f store.Filter) ([]store.Benchmark, error)
}

// noHistory says why history has nothing to show: no benchmark recorded
// in s at all, or none matching the filters given, which it names.
func noHistory(cmd *cobra.Command, s benchLister, db string) error {
	var given []string
	for _, name := range historyFilters {
		if f := cmd.Flags().Lookup(name); f.Changed {
			given = append(given, "--"+name+" "+shellQuote(f.Value.String()))
		}
	}
	if len(given) > 0 {
		if all, err := s.Benchmarks(cmd.Context(), store.Filter{}); err == nil && len(all) == 0 {
			given = nil
		}
	}
	switch len(given) {
	case 0:
		return fmt.Errorf("no benchmarks recorded in %s yet: record results first (perfscope bench ./...)", describeDB(db))
	case 1:
		return fmt.Errorf("no recorded benchmark runs match %s: leave it out to see which exist", given[0])
	}
	return fmt.Errorf("no recorded benchmark runs match %s: leave some out to see which exist", strings.Join(given, " "))
}

// shellQuote quotes s for a shell when it holds more than letters, digits
// and ./_-:
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./_-:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
