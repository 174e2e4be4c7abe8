package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/demo"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/report"
)

func init() { register(newDemoCmd) }

func newDemoCmd() *cobra.Command {
	var (
		rf          reportFlags
		duration    time.Duration
		concurrency int
		quiet       bool
		full        bool
		rec         recordFlags
	)
	c := &cobra.Command{
		Use:   "demo",
		Short: "Profile the bundled left-pad service, naive and then optimized, and compare them",
		Long: `demo runs the whole loop on a bundled example: it starts the left-pad
microservice (StatsD metrics and an access log; 'perfscope example leftpad')
as a child process in its naive mode on a free loopback port, profiles it under load (-d, default
10s); then does the same for the optimized mode. It prints each mode's
findings, one line each, and the two modes side by side: throughput, latency,
allocations and CPU per request. --full prints each mode's whole report.

Both runs are saved like any 'perfscope profile' run: open their profiles with
'go tool pprof' or re-render them with 'perfscope report RUNDIR'.

The example is part of the perfscope binary and its source is embedded, so
the demo runs in any directory. For the compiler's reasons behind the
findings, the source is built with the go command in a temporary module (its
dependencies from the module cache, or the module proxy); --no-source skips
that.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := rf.check(); err != nil {
				return err
			}
			if duration < 2*time.Second {
				return usagef("-d %s: give at least 2s per mode, so the profiles have something to show", duration)
			}
			if concurrency < 1 {
				return usagef("-c %d: concurrency must be at least 1", concurrency)
			}
			logf := func(format string, a ...any) {
				if !quiet {
					fmt.Fprintf(os.Stderr, format+"\n", a...)
				}
			}
			rf.opts.Status = func(msg string) { logf("%s", msg) }
			res, err := demo.Run(cmd.Context(), demo.Options{
				Duration:    duration,
				Concurrency: concurrency,
				Version:     perfscopeVersion(),
				Args:        os.Args,
				Logf:        logf,
				Progress: func(mode string) (func(loadgen.Progress), func()) {
					return newLoadProgress(quiet, mode)
				},
				Analysis: rf.opts,
				Source:   rf.source,
			})
			if res == nil {
				return err
			}
			rec.recordProfileRuns(cmd.Context(), os.Stderr, res.Runs...)
			if werr := writeDemo(cmd.OutOrStdout(), report.Format(rf.format), res, full); werr != nil {
				return werr
			}
			for _, r := range res.Runs {
				logf("saved %s", r.Dir)
			}
			return err
		},
	}
	f := c.Flags()
	addFormatFlag(c, &rf.format, report.Formats()...)
	rf.register(f)
	f.DurationVarP(&duration, "duration", "d", 10*time.Second, "load each mode for this long")
	f.IntVarP(&concurrency, "concurrency", "c", 8, "connections kept busy at once")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress bar or status lines")
	f.BoolVar(&full, "full", false, "print each mode's whole report, not only its findings' headlines")
	rec.register(f, "the runs")
	c.AddCommand(newDemoWatchCmd())
	return c
}

// writeDemo prints the demo's outcome (see report.WriteDemo).
func writeDemo(w io.Writer, f report.Format, res *demo.Result, full bool) error {
	modes := make([]report.DemoMode, len(res.Analyses))
	for i, ar := range res.Analyses {
		modes[i] = report.DemoMode{Example: "leftpad", Mode: demo.Modes()[i], RunDir: res.Runs[i].Dir, Result: ar}
	}
	return report.WriteDemo(w, f, modes, res.Comparison, full)
}
