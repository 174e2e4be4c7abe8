package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
)

func init() { register(newHistoryCmd) }

func newHistoryCmd() *cobra.Command {
	var (
		bench, pkg, unit, since string
		branch, machine, db     string
		format                  string
		alpha                   float64
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

A commit is marked only when both hold: the U-test separates its samples from
the previous commit's (p <= --alpha), and the median moved more than 4 times
the benchmark's typical commit-to-commit movement (the median absolute
deviation of all adjacent changes shown). The second test is what keeps
run-to-run noise (machine load, CPU frequency) from being marked; benchmarks
need at least 5 commits before anything is marked.

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
			if !(alpha > 0 && alpha < 1) {
				return usagef("--alpha %v: must be between 0 and 1", alpha)
			}
			f := store.Filter{Branch: branch, Machine: machine, Package: pkg, Name: bench, Unit: unit}
			if since != "" {
				t, err := parseSince(since, time.Now())
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

			series, err := history.Load(ctx, s, f, history.Options{Alpha: alpha})
			if errors.Is(err, history.ErrNoBenchmarks) || err == nil && len(series) == 0 {
				return noHistory(cmd, s, db)
			}
			if err != nil {
				return err
			}
			for i, h := range series {
				if len(h.Machines) > 1 {
					series[i].Warnings = append([]string{report.MixedMachines(h.Machines)}, h.Warnings...)
				}
			}
			return report.WriteHistory(cmd.OutOrStdout(), report.Format(format), series, changedOnly)
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
	fl.BoolVar(&changedOnly, "changed", false, "list only the commits marked changed")
	fl.StringVar(&db, "db", "", "SQLite file or postgres:// URL of the store (default ~/.perfscope/perfscope.db)")
	addFormatFlag(c, &format, formats...)
	return c
}

// historyFilters are the flags of history that select what it shows.
var historyFilters = []string{"bench", "pkg", "unit", "branch", "machine", "since"}

// noHistory says why history has nothing to show: no benchmark recorded
// in s at all, or none matching the filters given, which it names.
func noHistory(cmd *cobra.Command, s store.Store, db string) error {
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

// parseSince reads --since: a date, an RFC 3339 time, or a duration before
// now, which may use d (days) and w (weeks) as well as Go's units.
func parseSince(s string, now time.Time) (time.Time, error) {
	for _, layout := range []string{time.DateOnly, time.RFC3339, "2006-01-02T15:04", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			if v, err := strconv.ParseFloat(n, 64); err == nil && v >= 0 {
				return now.Add(-time.Duration(v * float64(unit))), nil
			}
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a date (2025-03-01) nor a duration (72h, 30d, 2w)", s)
}
