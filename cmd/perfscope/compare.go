package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/compare"
	"github.com/perfscope/perfscope/internal/profdiff"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
)

func init() { register(newCompareCmd) }

func newCompareCmd() *cobra.Command {
	var (
		opts     compare.Options
		ignore   string
		renames  []string
		profiles []string
		format   string
		topN     int
		db       string
	)
	formats := []string{"text", "markdown", "json", "csv"}
	c := &cobra.Command{
		Use:   "compare A B [C ...]",
		Short: "Compare benchmark results with benchstat's statistics, plus profile diffs",
		Long: `compare summarizes and compares Go benchmark results exactly as benchstat does:
the median of each benchmark with its 95% confidence interval, and for every
input after the first the change against the first with a Mann-Whitney U-test
p-value; "~" means the change is not significant at -alpha. A geomean row
closes each table; footnotes explain thin data ("need >= 6 samples for
confidence interval at level 0.95").

Each argument is a benchmark file in Go benchmark format ("go test -bench"
output or a 'perfscope bench' file), or a commit recorded by 'perfscope bench'
(a hash or a unique prefix of 4 characters or more; "+dirty" for results from
a modified work tree), read from the store (--db); "label=ref" sets the
column label.
perfscope's run keys (commit, branch, dirty) are ignored when grouping, so
files of two commits compare instead of forming separate tables; benchstat
needs -ignore commit,branch,dirty for the same. A recorded commit carries its
runs' goos, goarch, cpu and go lines, so it groups with 'perfscope bench'
files of the same machine; a plain "go test" file has no go line and needs
--ignore go to share its tables.

When both sides have profiles (--profile BASE.pb.gz --profile HEAD.pb.gz, or
CPU/memory profiles that 'perfscope bench' saved beside the files), a "where
it changed" section lists the functions whose flat and cumulative cost
changed most (the base subtracted from the head, as pprof -diff_base).

Flags:
  --alpha A         significance level of the U-test (default 0.05)
  --confidence C    confidence level of the intervals (default 0.95)
  --ignore KEYS     ignore variation in these keys when grouping (as benchstat -ignore), e.g. pkg or goos,cpu
  --rename OLD=NEW  pair benchmark OLD in earlier files with NEW in later ones (repeatable)
  --filter QUERY    keep only matching results (benchstat -filter syntax, e.g. ".name:Encode")
  --table/--row/--col PROJ  regroup results (benchstat -table/-row/-col)
  --keep-run-keys   group by commit, branch and dirty too
  --profile FILE    a profile: the first is the base, the second the head
  --top N           functions listed per profile diff (default 10)
  --format F        text (default), markdown (PR comments), json, csv`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, formats...); err != nil {
				return err
			}
			if ignore != "" {
				opts.Ignore = strings.FieldsFunc(ignore, func(r rune) bool { return r == ',' || r == ' ' })
			}
			for _, r := range renames {
				rn, err := compare.ParseRename(r)
				if err != nil {
					return usagef("--rename: %v", err)
				}
				opts.Renames = append(opts.Renames, rn)
			}
			if len(profiles) != 0 && len(profiles) != 2 {
				return usagef("--profile: give exactly two, the base then the head")
			}
			inputs, err := compare.ResolveAll(cmd.Context(), compareResolver(db), args)
			if errors.Is(err, compare.ErrNotFound) {
				return usagef("%v", err)
			}
			if err != nil {
				return err
			}
			cmp, err := compare.Compare(inputs, opts)
			if err != nil {
				return usagef("%v", err)
			}
			var diffs []*profdiff.Diff
			var paths []string
			for _, in := range inputs {
				paths = append(paths, in.Path)
			}
			pairs, err := profdiff.Pairs(paths, profiles)
			if err != nil {
				return err
			}
			for _, p := range pairs {
				d, err := profdiff.Compute(p, topN)
				if err != nil {
					return err
				}
				diffs = append(diffs, d)
			}
			// Skipped lines are reported on stderr so they never
			// corrupt machine-readable output.
			for _, w := range cmp.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			if len(cmp.Tables) == 0 {
				return exitError{code: 1, msg: "no benchmark results in " + strings.Join(args, ", ")}
			}
			out := cmd.OutOrStdout()
			switch format {
			case "markdown":
				if err = compare.WriteMarkdown(out, cmp); err == nil {
					err = report.WriteProfileDiffs(out, report.Markdown, diffs)
				}
			case "json":
				err = compare.WriteJSON(out, cmp, diffs)
			case "csv":
				err = cmp.WriteCSV(out, cmd.ErrOrStderr())
			default:
				if err = cmp.WriteText(out); err == nil {
					err = report.WriteProfileDiffs(out, report.Text, diffs)
				}
			}
			return err
		},
	}
	f := c.Flags()
	f.Float64Var(&opts.Alpha, "alpha", 0.05, "significance level of the U-test")
	f.Float64Var(&opts.Confidence, "confidence", 0.95, "confidence level of the intervals")
	f.StringVar(&ignore, "ignore", "", "ignore variation in these comma-separated keys when grouping")
	f.StringArrayVar(&renames, "rename", nil, "pair renamed benchmarks: OLD=NEW (repeatable)")
	f.StringVar(&opts.Filter, "filter", "*", "keep only results matching this benchstat filter query")
	f.StringVar(&opts.Table, "table", ".config", "split results into tables by this projection")
	f.StringVar(&opts.Row, "row", ".fullname", "split results into rows by this projection")
	f.StringVar(&opts.Col, "col", ".file", "split results into columns by this projection")
	f.BoolVar(&opts.KeepRunKeys, "keep-run-keys", false, "group by commit, branch and dirty too")
	f.StringArrayVar(&profiles, "profile", nil, "profile file; first the base, then the head")
	f.IntVar(&topN, "top", 10, "functions listed per profile diff")
	f.StringVar(&db, "db", "", "SQLite file or postgres:// URL of the store that commit references are read from (default ~/.perfscope/perfscope.db)")
	addFormatFlag(c, &format, formats...)
	return c
}

// compareResolver resolves compare's arguments: benchmark files first, then
// commits recorded in the store at db.
func compareResolver(db string) compare.Resolver {
	return compare.Resolvers{compare.FileResolver{}, store.CommitResolver{DB: db}}
}
