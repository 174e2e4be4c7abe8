package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/capture"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/run"
)

func init() { register(newProfileCmd) }

func newProfileCmd() *cobra.Command {
	var (
		lf              loadFlags
		rf              reportFlags
		pprofURL        string
		pprofHeaders    []string
		out             string
		warmup          time.Duration
		allowNoProfiles bool
		pprofUnverified bool
		quiet           bool
		rec             recordFlags
	)
	c := &cobra.Command{
		Use:   "profile URL",
		Short: "Load a service while capturing its CPU, allocation, heap, block, mutex and goroutine profiles",
		Long: `profile sends load to URL (the same flags as 'perfscope load') and, during
the load, captures the service's profiles from its pprof endpoints:

  cpu              profile?seconds=N over the profile window
  allocs, heap     what was allocated during the window (delta profiles)
  block, mutex     waits during the window (delta profiles)
  goroutine        at the start and at the end of the window

The profile window is the load minus a short warm-up (--warmup). Everything is
saved in a run directory (--out; default ` + run.DefaultRoot + `/<time>-<id>/):
each profile as <kind>.pb.gz, which 'go tool pprof' opens, and run.json with
the target, the flags, the load result, the times, perfscope's version and the
git commit of the current directory. Then the report is printed; re-render it
later with 'perfscope report RUNDIR'.

Where the profiles come from: --pprof when given; otherwise the target's origin
+ /debug/pprof/; and when that serves no pprof and the target runs on this
machine, http://127.0.0.1:6060/debug/pprof/ — where perfscope's expose package
and the bundled examples serve them by default. -H headers are sent to the
pprof endpoints too (an Authorization header usually covers both); --pprof-header
adds headers for pprof only.

Before the load, perfscope proves that the endpoint belongs to the process
serving URL: it opens a few idle connections to URL and watches them appear
among the endpoint's connection goroutines, and disappear when they close.
An endpoint that does not follow them is another program's: profile stops
with one line saying so and records nothing. Where the proof cannot work (a
proxy or load balancer between perfscope and the service), --pprof-unverified
skips it; the report then says the profiles are unverified.

A load whose failed requests exceed --max-errors (1% by default) failed: the
report leads with why, its findings are not presented as a clean bill of
health, and the exit status is 1.

A run is saved whatever happens once the load starts: a profile that cannot be
fetched is recorded with its error while the others go on, and Ctrl-C stops the
load and keeps what was measured: every profile taken, the CPU profile of the
elapsed window (the 2-second chunk in progress is waited for), run.json and
the store record.`,
		Example: `  perfscope profile -d 30s 'http://localhost:8080/v1/leftpad/?str=test&len=50&chr=*'
  perfscope profile -c 32 -n 200000 --pprof http://localhost:6060/debug/pprof/ http://localhost:8080/
  perfscope profile --rate 500 -d 1m -H "Authorization: Bearer $TOKEN" https://svc.internal/api`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := rf.check(); err != nil {
				return err
			}
			cfg, err := lf.config(args[0])
			if err != nil {
				return err
			}
			hdr, err := parseHeaders(pprofHeaders)
			if err != nil {
				return err
			}
			update, finish := newLoadProgress(quiet, "profile")
			cfg.Progress = update
			logf := func(format string, a ...any) {
				if !quiet {
					fmt.Fprintf(os.Stderr, format+"\n", a...)
				}
			}
			saved, err := capture.Profile(cmd.Context(), capture.Options{
				Load:            cfg,
				PprofURL:        pprofURL,
				Header:          hdr,
				Warmup:          warmup,
				OutDir:          out,
				PprofUnverified: pprofUnverified,
				AllowNoProfiles: allowNoProfiles,
				Args:            os.Args,
				Version:         perfscopeVersion(),
				Logf:            logf,
			})
			finish()
			if saved == nil {
				return err
			}
			rec.recordProfileRuns(cmd.Context(), os.Stderr, saved)
			if _, rerr := writeRunReport(cmd.Context(), cmd.OutOrStdout(), rf, saved); rerr != nil {
				return rerr
			}
			logf("saved %s (re-render with: perfscope report %s)", saved.Dir, saved.Dir)
			if err != nil {
				return err
			}
			if err := loadFailed(saved.Load); err != nil {
				return err
			}
			if saved.Interrupted {
				return exitError{code: 130, msg: "interrupted: the run holds what was measured until then"}
			}
			return nil
		},
	}
	f := c.Flags()
	lf.register(f)
	addFormatFlag(c, &rf.format, report.Formats()...)
	rf.register(f)
	f.StringVar(&pprofURL, "pprof", "", "base `URL` of the pprof endpoints, e.g. http://127.0.0.1:6060/debug/pprof/ (default: found as described above)")
	f.StringArrayVar(&pprofHeaders, "pprof-header", nil, `header "Name: value" for the pprof endpoints only; repeatable`)
	f.StringVar(&out, "out", "", "run directory to create (default "+run.DefaultRoot+"/<time>-<id>)")
	f.DurationVar(&warmup, "warmup", 0, "load this long before profiling starts (default: the smaller of 1s and a tenth of the load)")
	f.BoolVar(&pprofUnverified, "pprof-unverified", false, "trust the pprof endpoint without proving it belongs to the process serving URL (for a proxy in between)")
	f.BoolVar(&allowNoProfiles, "allow-no-profiles", false, "run the load even when no pprof endpoint answers; the run then has the load result only")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress bar or status lines")
	rec.register(f, "the run")
	return c
}
