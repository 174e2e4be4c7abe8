package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/perf/benchunit"

	"github.com/perfscope/perfscope/internal/compare"
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
Runs made on a work tree with uncommitted changes show as COMMIT+dirty.

Flags:
  --bench REGEX    benchmarks whose full name matches (e.g. 'Parse/size=1000')
  --pkg REGEX      packages whose import path matches
  --unit U         one metric only: sec/op, B/op, allocs/op or a custom unit
  --since WHEN     commits from a date (2025-03-01, RFC 3339) or a duration ago (72h, 30d, 2w)
  --branch B       runs on this branch only
  --machine HOST   runs on this host only (results of different machines do not compare)
  --alpha A        significance level of the U-test (default 0.05)
  --changed        list only the commits marked changed
  --db PATH|URL    the store: a SQLite file (default ~/.perfscope/perfscope.db) or postgres://...
  --format F       text (default) or json`,
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
			s, err := store.OpenExisting(ctx, db)
			if errors.Is(err, store.ErrNoDatabase) {
				return fmt.Errorf("%w: record results with 'perfscope bench' first, or pass --db", err)
			}
			if err != nil {
				return err
			}
			defer s.Close()

			benches, err := s.Benchmarks(ctx, f)
			if err != nil {
				return err
			}
			if len(benches) == 0 {
				return errors.New("no recorded benchmarks match: see which exist with no --bench/--pkg/--unit, or check --branch and --machine")
			}
			opts := compare.HistoryOptions{Alpha: alpha}
			var out []store.History
			for _, b := range benches {
				for _, u := range b.Units {
					key := store.SeriesKey{Package: b.Package, Name: b.Name, Unit: u}
					points, err := s.Series(ctx, key, f)
					if err != nil {
						return err
					}
					if len(points) == 0 {
						continue
					}
					out = append(out, newHistory(key, points, opts))
				}
			}
			if len(out) == 0 {
				return fmt.Errorf("no runs of the matching benchmarks since %s", f.Since.Format("2006-01-02 15:04"))
			}
			w := cmd.OutOrStdout()
			if format == "json" {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(historyOutput{Series: out})
			}
			return writeHistoryText(w, out, changedOnly)
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

// historyOutput is history's JSON output. Its field names are stable.
type historyOutput struct {
	Series []store.History `json:"series"`
}

// newHistory runs change detection over one metric's points.
func newHistory(key store.SeriesKey, points []store.SeriesPoint, opts compare.HistoryOptions) store.History {
	h := store.NewHistory(key, points, opts)
	if len(h.Machines) > 1 {
		h.Warnings = append([]string{fmt.Sprintf("results of %d machines (%s) are mixed: pass --machine", len(h.Machines), strings.Join(h.Machines, ", "))}, h.Warnings...)
	}
	return h
}

// writeHistoryText prints one table per metric.
func writeHistoryText(w io.Writer, series []store.History, changedOnly bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	first := true
	for _, s := range series {
		if changedOnly && !slices.ContainsFunc(s.Commits, func(c store.HistoryCommit) bool { return c.Changed }) {
			continue
		}
		if !first {
			fmt.Fprintln(tw)
		}
		first = false
		fmt.Fprintf(tw, "%s %s  %s\n", s.Package, s.Name, s.Unit)
		switch {
		case s.Noise != nil && *s.Noise == 0:
			fmt.Fprintln(tw, "no noise between commits: every significant change is marked")
		case s.Noise != nil:
			fmt.Fprintf(tw, "noise ±%.1f%% per commit; changes beyond %+.1f%% / %+.1f%% are marked\n",
				100**s.Noise, 100**s.Threshold, 100*(1/(1+*s.Threshold)-1))
		}
		var centers []float64
		for _, c := range s.Commits {
			centers = append(centers, c.Median)
		}
		scale := benchunit.CommonScale(centers, benchunit.ClassOf(s.Unit))
		fmtv := func(v *float64) string {
			if v == nil {
				return "?"
			}
			return scale.Format(*v)
		}
		fmt.Fprintln(tw, "commit\tdate\tmedian\t95% CI\tn\tvs previous\t")
		for _, c := range s.Commits {
			if changedOnly && !c.Changed {
				continue
			}
			ref := c.Commit
			if len(ref) > 12 {
				ref = ref[:12]
			}
			if c.Dirty {
				ref += "+dirty"
			}
			vs := ""
			switch {
			case c.P == nil && c.Delta == nil:
			case c.Delta == nil:
				vs = fmt.Sprintf("from 0  p=%.3f", *c.P)
			default:
				vs = fmt.Sprintf("%+.1f%%  p=%.3f", 100**c.Delta, *c.P)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t[%s, %s]\t%d\t%s\t%s\n", ref, c.Time.Local().Format("2006-01-02 15:04"),
				scale.Format(c.Median), fmtv(c.Lo), fmtv(c.Hi), c.N, vs, historyMark(c))
		}
		for _, warn := range s.Warnings {
			fmt.Fprintf(tw, "note: %s\n", warn)
		}
	}
	return tw.Flush()
}

// historyUnitRank orders the units go test reports first, as benchstat
// does, and the rest after them.
func historyUnitRank(unit string) int {
	switch unit {
	case "sec/op":
		return 0
	case "B/op":
		return 1
	case "allocs/op":
		return 2
	}
	return 3
}

// historyMark names a marked change in words.
func historyMark(c store.HistoryCommit) string {
	if !c.Changed {
		return ""
	}
	switch c.Better {
	case 1:
		return "<- improvement"
	case -1:
		return "<- REGRESSION"
	}
	return "<- changed"
}
