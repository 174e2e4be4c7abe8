package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/demo"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report"
)

func newDemoWatchCmd() *cobra.Command {
	var (
		rf       reportFlags
		duration time.Duration
		interval time.Duration
		db       string
	)
	c := &cobra.Command{
		Use:   "watch",
		Short: "Continuous profiling on the bundled examples: scrape them for a minute, then query and diagnose that minute",
		Long: `watch shows 'perfscope scrape' and 'perfscope query' on the bundled examples:
it starts leftpad (naive and optimized) and txsummary (naive) on free loopback
ports, sends each a steady load of its own, and scrapes all three every
--interval (default 10s) for -d (default 1m) into a store, as a scraper does
a fleet. Then it prints what a query answers over that minute: the hottest
functions of each service and the findings of leftpad's naive mode, from the
same analysis and report as 'perfscope profile'. The store is kept (--db,
default perfscope-watch-demo.db in the temporary directory), so every
'perfscope query' it suggests can be run on it afterwards.`,
		Example: `  perfscope demo watch -d 30s`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := rf.check(); err != nil {
				return err
			}
			if interval < time.Second || interval%time.Second != 0 {
				return usagef("--interval %s: give whole seconds, 1s or more", interval)
			}
			if duration < 2*interval {
				return usagef("-d %s: give at least two intervals (%s), so each service is scraped more than once", duration, 2*interval)
			}
			if db == "" {
				db = filepath.Join(os.TempDir(), "perfscope-watch-demo.db")
			}
			ctx := cmd.Context()
			st, err := openServerStore(cmd, db, false)
			if err != nil {
				return err
			}
			defer st.Close()
			logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
			rf.opts.Status = func(msg string) { logf("%s", msg) }
			res, err := demo.Watch(ctx, demo.WatchOptions{Duration: duration, Interval: interval, Sink: st, Logf: logf})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if err := report.WriteScrapeStatus(out, res.Health, true); err != nil {
				return err
			}
			for _, w := range res.Services {
				sel, err := profseries.ParseSelector(w.Selector)
				if err != nil {
					return err
				}
				q := profseries.Query{Type: profseries.CPU, Selector: sel, From: res.From, To: res.To}
				t, err := st.Top(ctx, q, profiles.ByFlat, 5)
				if err != nil {
					fmt.Fprintf(out, "\n%s: %v\n", w.Selector, err)
					continue
				}
				fmt.Fprintln(out)
				if err := report.WriteSeriesTop(out, report.Text, q, t); err != nil {
					return err
				}
			}
			naive := res.Services[0]
			sel, _ := profseries.ParseSelector(naive.Selector)
			in, err := analysis.FromSeries(ctx, st, sel, res.From, res.To)
			if err != nil {
				return err
			}
			fmt.Fprintln(out)
			if _, err := writeReport(ctx, out, rf, in); err != nil {
				return err
			}
			return report.WriteWatchNext(out, db, naive.Selector, res.From, res.To)
		},
	}
	f := c.Flags()
	f.DurationVarP(&duration, "duration", "d", time.Minute, "how long the examples are scraped")
	f.DurationVar(&interval, "interval", 10*time.Second, "the scrape interval")
	f.StringVar(&db, "db", "", "the store to scrape into (default perfscope-watch-demo.db in the temporary directory)")
	rf.register(f)
	rf.format = string(report.Text)
	return c
}
