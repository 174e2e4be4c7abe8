package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/profdiff"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
)

func init() { register(newCompareCmd) }

func newCompareCmd() *cobra.Command {
	var (
		opts     benchstats.Options
		ignore   string
		renames  []string
		profiles []string
		format   string
		topN     int
		db       string
		branch   string
		machine  string
	)
	formats := []string{"text", "markdown", "json", "csv"}
	c := &cobra.Command{
		Use:   "compare A B [C ...]",
		Short: "Compare benchmark results with benchstat's statistics, plus profile diffs",
		Long: `compare summarizes and compares Go benchmark results exactly as benchstat does:
each benchmark's median with its 95% confidence interval and, for every input
after the first, the change against the first with a Mann-Whitney U-test
p-value ("~": not significant at --alpha); a geomean row closes each table and
footnotes explain thin data.

Each argument is a benchmark file ("go test -bench" output or a 'perfscope
bench' file) or a commit whose results 'perfscope bench' recorded, read from
the store (--db): a recorded hash or unique prefix of 4+ characters, or
anything git reads as a commit in the current repository (a branch, a tag,
HEAD, HEAD~2, a short hash); "+dirty" appended names the runs on a modified
work tree of that commit. "label=ref" sets the column label. The run keys commit, branch and
dirty are ignored when grouping (benchstat needs -ignore commit,branch,dirty);
a plain "go test" file has no go line and needs --ignore go to share tables
with a recorded commit.

When both sides have profiles (--profile twice, or the CPU/memory profiles
'perfscope bench' saved beside the files), "where it changed" lists the
functions whose flat and cumulative cost changed most (head minus base).`,
		Example: `  perfscope compare old.txt new.txt
  perfscope compare before=old.txt after=new.txt --format markdown
  perfscope compare main 1a2b3c4d --ignore go
  perfscope compare --rename Parse=Decode --filter '.name:Decode' old.txt new.txt
  perfscope compare --profile base.cpu.pb.gz --profile head.cpu.pb.gz old.txt new.txt`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, formats...); err != nil {
				return err
			}
			if ignore != "" {
				opts.Ignore = strings.FieldsFunc(ignore, func(r rune) bool { return r == ',' || r == ' ' })
			}
			for _, r := range renames {
				rn, err := benchstats.ParseRename(r)
				if err != nil {
					return usagef("--rename: %v", err)
				}
				opts.Renames = append(opts.Renames, rn)
			}
			if len(profiles) != 0 && len(profiles) != 2 {
				return usagef("--profile: give exactly two, the base then the head")
			}
			resolver := benchstats.Resolvers{benchstats.FileResolver{}, store.CommitResolver{DB: db, Filter: store.Filter{Branch: branch, Machine: machine}}}
			inputs, err := benchstats.ResolveAll(cmd.Context(), resolver, args)
			if errors.Is(err, benchstats.ErrNotFound) || errors.Is(err, store.ErrUnknownCommit) {
				return usagef("%v", err)
			}
			if err != nil {
				return err
			}
			cmp, err := benchstats.Compare(cmd.Context(), inputs, opts)
			if oe := (*benchstats.OptionsError)(nil); errors.As(err, &oe) {
				return usagef("%v", err)
			}
			if err != nil {
				return err
			}
			diffs, err := profileDiffs(inputs, profiles, topN)
			if err != nil {
				return err
			}
			// Skipped lines are reported on stderr so they never
			// corrupt machine-readable output.
			for _, w := range cmp.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			if len(cmp.Tables) == 0 {
				return exitError{code: 1, msg: "no benchmark results in " + strings.Join(args, ", ")}
			}
			if format == "csv" {
				return report.WriteBenchComparisonCSV(cmd.OutOrStdout(), cmd.ErrOrStderr(), cmp)
			}
			return report.WriteBenchComparison(cmd.OutOrStdout(), report.Format(format), cmp, diffs)
		},
	}
	f := c.Flags()
	f.Float64Var(&opts.Alpha, "alpha", 0.05, "significance level of the U-test")
	f.Float64Var(&opts.Confidence, "confidence", 0.95, "confidence level of the intervals")
	f.StringVar(&ignore, "ignore", "", "ignore variation in these comma-separated keys when grouping (as benchstat -ignore), e.g. pkg or goos,cpu")
	f.StringArrayVar(&renames, "rename", nil, "pair benchmark OLD in earlier inputs with NEW in later ones: OLD=NEW (repeatable)")
	f.StringVar(&opts.Filter, "filter", "*", `keep only results matching this benchstat filter query, e.g. ".name:Encode"`)
	f.StringVar(&opts.Table, "table", ".config", "split results into tables by this projection (benchstat -table)")
	f.StringVar(&opts.Row, "row", ".fullname", "split results into rows by this projection (benchstat -row)")
	f.StringVar(&opts.Col, "col", ".file", "split results into columns by this projection (benchstat -col)")
	f.BoolVar(&opts.KeepRunKeys, "keep-run-keys", false, "group by commit, branch and dirty too")
	f.StringArrayVar(&profiles, "profile", nil, "profile file to diff; give two, the base then the head")
	f.IntVar(&topN, "top", 10, "functions listed per profile diff")
	f.StringVar(&branch, "branch", "", "a recorded commit's runs on this branch only")
	f.StringVar(&machine, "machine", "", "a recorded commit's runs on this hostname only, as history and the dashboard compare")
	f.StringVar(&db, "db", "", "SQLite file or postgres:// URL of the store that commit references are read from (default ~/.perfscope/perfscope.db)")
	addFormatFlag(c, &format, formats...)
	return c
}

// profileDiffs diffs the profiles given explicitly, else those saved beside
// the first two inputs.
func profileDiffs(inputs []*benchstats.Input, explicit []string, topN int) ([]*profdiff.Diff, error) {
	var paths []string
	for _, in := range inputs {
		paths = append(paths, in.Path)
	}
	pairs, err := profdiff.Pairs(paths, explicit)
	var diffs []*profdiff.Diff
	for _, p := range pairs {
		d, err := profdiff.Compute(p, topN)
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, d)
	}
	return diffs, err
}
