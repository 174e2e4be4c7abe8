package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report"
)

func newQueryLeaksCmd() *cobra.Command {
	f := queryFlags{}
	var o profseries.LeakOptions
	var minBytes int64
	c := &cobra.Command{
		Use:   "leaks [SELECTOR]",
		Short: "Name the stacks whose goroutines or heap in use kept growing over a range, with their rate",
		Long: `leaks judges, for each target the selector chooses and each of its processes,
the level of every goroutine stack (goroutine and goroutineleak profiles) and
every heap allocation site (bytes in use) over the snapshots of the range, as
a trend: a stack is named when its level rises by the Mann–Kendall test (one-
sided, --alpha over the stacks tested), still rises over the later half of the
snapshots, and grew by at least --min-goroutines or --min-bytes. A restart
starts over. Each leak reads "goroutines started at F (file:line) grew by N
per hour for D", with its stack.`,
		Example: `  perfscope query leaks --db scrape.db --since 1h '{job="leftpad"}'`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Alpha <= 0 || o.Alpha >= 1 {
				return usagef("--alpha %g: give a probability between 0 and 1", o.Alpha)
			}
			o.MinBytes = float64(minBytes)
			st, q, err := f.query(cmd, selectorArg(args))
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := profseries.FindLeaks(cmd.Context(), st, q.Selector, q.From, q.To, o)
			if errors.Is(err, profseries.ErrNoLeakData) {
				return exitError{code: 1, msg: err.Error() + ": widen the range (--since) or the selector, or list what is stored with 'perfscope query targets'"}
			}
			if err != nil {
				return err
			}
			return report.WriteLeaks(cmd.OutOrStdout(), report.Format(f.format), rep)
		},
	}
	f.register(c.Flags())
	c.Flags().Float64Var(&o.Alpha, "alpha", 0.01, "the chance, over all stacks tested, of naming one that does not grow")
	c.Flags().IntVar(&o.MinPoints, "min-snapshots", 12, "the fewest snapshots of one process judged")
	c.Flags().DurationVar(&o.MinSpan, "min-span", 60e9, "the shortest time those snapshots must span")
	c.Flags().Float64Var(&o.MinGoroutines, "min-goroutines", 10, "the least growth of goroutines named")
	c.Flags().Int64Var(&minBytes, "min-bytes", 1<<20, "the least growth of heap in use named, in bytes")
	addFormatFlag(c, &f.format, report.Formats()...)
	return c
}

func newQueryDeploysCmd() *cobra.Command {
	f := queryFlags{}
	var o profseries.DeployOptions
	c := &cobra.Command{
		Use:   "deploys [SELECTOR]",
		Short: "List each change of a service's version or binary over a range, with its CPU per request and the functions whose share of CPU changed",
		Long: `deploys finds every change of release of the services the selector chooses —
a new value of the version label, or a new build id of the main binary — and
compares the scrapes before it (--span, of the old release) with those after
(of the new one). Targets are one service when their labels but version and
instance agree. Where the scrapes count requests (the target serves its
application behind expose.Middleware) the deploy is judged by CPU seconds per
request, in all and per route, changes smaller than --min-per-request-change
not significant; else by shares alone, and the output says why. Either way
each function's cum share of the profile per scrape is compared, changes
smaller than --min-change not listed. Every comparison is the Mann–Whitney U
test at --alpha divided by the tests made.`,
		Example: `  perfscope query deploys --db scrape.db --since 24h '{job="leftpad"}'`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Alpha <= 0 || o.Alpha >= 1 {
				return usagef("--alpha %g: give a probability between 0 and 1", o.Alpha)
			}
			st, q, err := f.query(cmd, selectorArg(args))
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := profseries.FindDeploys(cmd.Context(), st, q.Selector, q.From, q.To, o)
			if err != nil {
				return err
			}
			return report.WriteDeploys(cmd.OutOrStdout(), report.Format(f.format), rep)
		},
	}
	f.register(c.Flags())
	c.Flags().StringVar(&o.Type, "type", profseries.CPU, "the profile type compared")
	c.Flags().DurationVar(&o.Span, "span", 30*60e9, "how long before and after each deploy is compared")
	c.Flags().Float64Var(&o.Alpha, "alpha", 0.05, "the chance, over all functions tested, of listing one that did not change")
	c.Flags().Float64Var(&o.MinChange, "min-change", 0.01, "the least change of share listed (0.01: one percentage point)")
	c.Flags().Float64Var(&o.MinPerRequestChange, "min-per-request-change", 0.05, "the least relative change of CPU per request called significant (0.05: 5%)")
	addFormatFlag(c, &f.format, report.Formats()...)
	return c
}
