package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/units"
)

func init() { register(newQueryCmd) }

func newQueryCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "query",
		Short: "Ask the profiles 'perfscope scrape' stored: any time range, merged, ranked, over time, diffed, diagnosed",
		Long: `query reads the profile series 'perfscope scrape' keeps in a store (--db, the
same SQLite file or PostgreSQL database) and answers for any time range and
any set of targets. A SELECTOR chooses series by their labels, as in
Prometheus: {job="api", version=~"1\\..*", zone!="eu"}; none chooses all.
A range is --since (a duration ago, default 1h) or --from and --to (a date,
2026-11-26 14:00, or a duration ago, 90m; --to defaults to now).`,
		Args: cobra.NoArgs,
	}
	for _, sub := range []func() *cobra.Command{newQueryTargetsCmd, newQueryMergeCmd, newQueryTopCmd, newQueryFunctionCmd, newQueryDiffCmd, newQueryFindingsCmd, newQueryLeaksCmd, newQueryDeploysCmd} {
		c.AddCommand(sub())
	}
	return c
}

// queryFlags are the flags every query subcommand shares.
type queryFlags struct {
	db, typ, sampleType  string
	since, from, to      string
	format               string
	withType, withSample bool
	defaultType          string
}

func (f *queryFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.db, "db", "", "the store: a SQLite file or a postgres:// URL (default ~/.perfscope/perfscope.db)")
	fs.StringVar(&f.since, "since", "1h", "the range: from a duration ago (90m, 24h, 7d) or a date, to now")
	fs.StringVar(&f.from, "from", "", "the range's start: a date (2026-11-26 14:00) or a duration ago; overrides --since")
	fs.StringVar(&f.to, "to", "", "the range's end: a date or a duration ago (default now)")
	if f.withType {
		fs.StringVar(&f.typ, "type", f.defaultType, "the profile type: cpu, allocs, heap, goroutine, mutex, block, goroutineleak")
	}
	if f.withSample {
		fs.StringVar(&f.sampleType, "sample-type", "", "the sample type ranked (cpu's samples or cpu; allocs' alloc_space or alloc_objects; ...) (default the profile's own)")
	}
}

// query is the store and the query the flags and the selector argument
// name; the caller closes the store.
func (f *queryFlags) query(cmd *cobra.Command, selector string) (*store.DB, profseries.Query, error) {
	sel, err := profseries.ParseSelector(selector)
	if err != nil {
		return nil, profseries.Query{}, usagef("selector %s: %v", selector, err)
	}
	from, to, err := profseries.ParseRange(f.since, f.from, f.to, time.Now())
	if err != nil {
		return nil, profseries.Query{}, usagef("%v", err)
	}
	q := profseries.Query{Type: f.typ, Selector: sel, From: from, To: to, SampleType: f.sampleType}
	if f.withType {
		if err := q.Check(); err != nil {
			return nil, q, usagef("%v", err)
		}
	}
	if f.format != "" {
		if err := checkFormat(f.format, report.Formats()...); err != nil {
			return nil, q, err
		}
	}
	st, err := store.OpenReadOnly(cmd.Context(), f.db)
	if err != nil {
		return nil, q, storeOpenError(err, "scrape profiles first (perfscope scrape --config FILE), or pass --db")
	}
	return st, q, nil
}

// queryError turns "nothing stored" into one line that says what to do.
func queryError(err error) error {
	if errors.Is(err, profseries.ErrNoFunction) {
		return exitError{code: 1, msg: err.Error()}
	}
	if errors.Is(err, store.ErrNoProfiles) {
		return exitError{code: 1, msg: err.Error() + ": widen the range (--since) or the selector, or list what is stored with 'perfscope query targets'"}
	}
	return err
}

func selectorArg(args []string) string {
	if len(args) > 0 {
		return args[len(args)-1]
	}
	return ""
}

func newQueryTargetsCmd() *cobra.Command {
	f := queryFlags{withType: false}
	var typ string
	c := &cobra.Command{
		Use:     "targets [SELECTOR]",
		Short:   "List the stored profile series: each target's labels and types, the time they span, their size",
		Example: `  perfscope query targets --db scrape.db '{job="leftpad"}'`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, q, err := f.query(cmd, selectorArg(args))
			if err != nil {
				return err
			}
			defer st.Close()
			ts, err := st.ProfileTargets(cmd.Context(), typ, q.Selector)
			if err != nil {
				return err
			}
			return report.WriteProfileTargets(cmd.OutOrStdout(), report.Format(f.format), ts)
		},
	}
	f.register(c.Flags())
	c.Flags().StringVar(&typ, "type", "", "one profile type only")
	addFormatFlag(c, &f.format, report.Formats()...)
	return c
}

func newQueryMergeCmd() *cobra.Command {
	f := queryFlags{withType: true, defaultType: profseries.CPU}
	var out string
	c := &cobra.Command{
		Use:   "merge [SELECTOR] -o FILE",
		Short: "Merge one profile type over a range into a .pb.gz that go tool pprof opens and go build -pgo takes",
		Example: `  perfscope query merge --db scrape.db --since 24h '{job="leftpad"}' -o default.pgo
  go tool pprof -top default.pgo`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("give the file to write with -o FILE (default.pgo beside a main package is what go build -pgo=auto reads)")
			}
			st, q, err := f.query(cmd, selectorArg(args))
			if err != nil {
				return err
			}
			defer st.Close()
			m, err := st.Merge(cmd.Context(), q)
			if err != nil {
				return queryError(err)
			}
			p := m.Profile
			file, err := os.Create(out)
			if err != nil {
				return err
			}
			if err := p.Write(file); err != nil {
				file.Close()
				return fmt.Errorf("write %s: %w", out, err)
			}
			if err := file.Close(); err != nil {
				return err
			}
			return report.WriteMerged(cmd.OutOrStdout(), out, q, p, m.Restarted)
		},
	}
	f.register(c.Flags())
	c.Flags().StringVarP(&out, "output", "o", "", "the `FILE` to write the merged profile to")
	return c
}

func newQueryTopCmd() *cobra.Command {
	f := queryFlags{withType: true, withSample: true, defaultType: profseries.CPU}
	var n int
	var cum bool
	c := &cobra.Command{
		Use:     "top [SELECTOR]",
		Short:   "The functions that cost most over a range, as pprof -top ranks them",
		Example: `  perfscope query top --db scrape.db --since 10m --type allocs '{job="leftpad"}'`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return usagef("-n %d: give a number of rows, 1 or more", n)
			}
			st, q, err := f.query(cmd, selectorArg(args))
			if err != nil {
				return err
			}
			defer st.Close()
			order := profiles.ByFlat
			if cum {
				order = profiles.ByCum
			}
			t, err := st.Top(cmd.Context(), q, order, n)
			if err != nil {
				return queryError(err)
			}
			return report.WriteSeriesTop(cmd.OutOrStdout(), report.Format(f.format), q, t)
		},
	}
	f.register(c.Flags())
	c.Flags().IntVarP(&n, "rows", "n", 20, "rows to show")
	c.Flags().BoolVar(&cum, "cum", false, "rank by cumulative value (the function and what it calls)")
	addFormatFlag(c, &f.format, report.Formats()...)
	return c
}

func newQueryFunctionCmd() *cobra.Command {
	f := queryFlags{withType: true, withSample: true, defaultType: profseries.CPU}
	var step time.Duration
	c := &cobra.Command{
		Use:   "function NAME [SELECTOR]",
		Short: "One function's share of a profile type over time, step by step",
		Long: `function shows one function's flat and cum share of the profile type in
each step of the range. NAME is the function's full name as pprof shows it:
the package path, a dot and the name (main.handler,
github.com/you/svc/internal/pad.leftpad, or a method such as
net/http.(*conn).serve); a step in which it was never sampled shows 0%.`,
		Example: `  perfscope query function --db scrape.db --since 6h --step 10m github.com/perfscope/perfscope/examples/leftpad.leftpad '{job="leftpad"}'`,
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if step < 0 {
				return usagef("--step %s: must be positive", step)
			}
			st, q, err := f.query(cmd, selectorArg(args[1:]))
			if err != nil {
				return err
			}
			defer st.Close()
			if step == 0 {
				step = profseries.SeriesStep(q.From, q.To)
			}
			pts, err := st.FunctionSeries(cmd.Context(), q, args[0], step)
			if err != nil {
				return queryError(err)
			}
			return report.WriteFunctionSeries(cmd.OutOrStdout(), report.Format(f.format), q, args[0], pts)
		},
	}
	f.register(c.Flags())
	c.Flags().DurationVar(&step, "step", 0, "the length of each step (default: the range in about 240 steps, as the dashboard draws it: 1h in 20s, 24h in 10m)")
	addFormatFlag(c, &f.format, report.Formats()...)
	return c
}

func newQueryDiffCmd() *cobra.Command {
	f := queryFlags{withType: true, withSample: true, defaultType: profseries.CPU}
	var ago time.Duration
	var baseFrom, baseTo string
	var n int
	c := &cobra.Command{
		Use:   "diff [SELECTOR]",
		Short: "How a range's profile differs from another's, in shares of each range's total",
		Long: `diff compares the merged profile of the range (--since, or --from/--to) with a
base range: the same range --ago earlier (default 1h: now against an hour
ago), or --base-from/--base-to. Each function's flat and cum are shares of
their own range's total, so ranges of different length or load compare.`,
		Example: `  perfscope query diff --db scrape.db --since 10m --ago 1h '{job="leftpad"}'`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, head, err := f.query(cmd, selectorArg(args))
			if err != nil {
				return err
			}
			defer st.Close()
			base := head
			base.From, base.To = head.From.Add(-ago), head.To.Add(-ago)
			now := time.Now()
			if baseFrom != "" || baseTo != "" {
				if baseFrom == "" || baseTo == "" {
					return usagef("give both --base-from and --base-to, or neither (--ago)")
				}
				if base.From, err = units.ParseInstant(baseFrom, now); err != nil {
					return usagef("--base-from: %v", err)
				}
				if base.To, err = units.ParseInstant(baseTo, now); err != nil {
					return usagef("--base-to: %v", err)
				}
				if err := base.Check(); err != nil {
					return usagef("base: %v", err)
				}
			} else if ago <= 0 {
				return usagef("--ago %s: must be positive", ago)
			}
			d, err := st.Diff(cmd.Context(), base, head)
			if err != nil {
				return queryError(err)
			}
			return report.WriteRangeDiff(cmd.OutOrStdout(), report.Format(f.format), base, head, d, n)
		},
	}
	f.register(c.Flags())
	c.Flags().DurationVar(&ago, "ago", time.Hour, "the base is the same range this much earlier")
	c.Flags().StringVar(&baseFrom, "base-from", "", "the base range's start (a date or a duration ago), with --base-to")
	c.Flags().StringVar(&baseTo, "base-to", "", "the base range's end, with --base-from")
	c.Flags().IntVarP(&n, "rows", "n", 20, "rows to show (0: all)")
	addFormatFlag(c, &f.format, report.Formats()...)
	return c
}

func newQueryFindingsCmd() *cobra.Command {
	f := queryFlags{}
	var rf reportFlags
	c := &cobra.Command{
		Use:   "findings [SELECTOR]",
		Short: "Diagnose a range of scraped profiles: the report and findings 'perfscope profile' gives a run",
		Long: `findings merges every profile type the selector's targets were scraped for
over the range and analyses them with the same pipeline and report as
'perfscope profile' and 'perfscope report': hot code, allocations at your
lines, GC share, waits, goroutine growth, and the findings with their fixes.
No load was generated, so there are no per-request figures; CPU reads as
cores used, summed over the targets chosen.`,
		Example: `  perfscope query findings --db scrape.db --since 10m '{job="leftpad"}'`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rf.format = f.format
			if err := rf.check(); err != nil {
				return err
			}
			st, q, err := f.query(cmd, selectorArg(args))
			if err != nil {
				return err
			}
			defer st.Close()
			in, err := analysis.FromSeries(cmd.Context(), st, q.Selector, q.From, q.To)
			if err != nil {
				return err
			}
			if len(in.Profiles) == 0 {
				return queryError(fmt.Errorf("%w for %s from %s to %s", store.ErrNoProfiles, q.Selector, q.From.Format(time.RFC3339), q.To.Format(time.RFC3339)))
			}
			_, err = writeReport(cmd.Context(), cmd.OutOrStdout(), rf, in)
			return err
		},
	}
	f.register(c.Flags())
	rf.register(c.Flags())
	addFormatFlag(c, &f.format, report.Formats()...)
	return c
}
