package main

import (
	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/report"
)

func init() { register(newLoadCmd) }

func newLoadCmd() *cobra.Command {
	var (
		lf     loadFlags
		format string
		quiet  bool
	)
	c := &cobra.Command{
		Use:   "load URL",
		Short: "Send HTTP load to a service and report throughput, latency and errors",
		Long: `Load sends HTTP/1.1 requests to URL and reports throughput, latency
percentiles and errors by kind, like ab and wrk.

Closed loop (the default): -c connections each send their next request as soon
as the previous response arrives, for -n requests in all or for -d.

Open loop (--rate): requests leave at a constant rate whether or not earlier
ones were answered, at most -c at a time. Latency counts from each request's
intended send time, so a stalled server cannot hide its stalls (coordinated
omission); sends the generator could not make on time are reported as late.

The target is checked before the load starts: an unreachable service gets one
line saying so. Ctrl-C stops the run and prints what was measured so far.

--format markdown suits a pull-request comment. --format json prints these
stable fields: url, method, mode ("closed" or "open"), concurrency, rate,
keepalive, start, duration_seconds, requests, successes, failures, errors (by
kind: connect_refused, timeout, reset, closed, malformed, other, status_NNN),
throughput_rps (successful responses per second), bytes_read, bytes_written, latency (min_ms, mean_ms, p50_ms,
p90_ms, p99_ms, p999_ms, max_ms), late (open loop: count, max_lag_ms,
dropped), interrupted, status_codes, health (failed, max_errors, error_share,
main_error, main_error_share).

A load whose failed requests exceed --max-errors (1% by default), or in
which no request completed, failed: the output leads with why, and the exit
status is 1.`,
		Example: `  perfscope load http://localhost:8080/
  perfscope load -c 64 -d 30s http://localhost:8080/api
  perfscope load -n 10000 --no-keepalive http://localhost:8080/
  perfscope load --rate 2000 -c 100 -d 1m http://localhost:8080/
  perfscope load -m POST -H "Content-Type: application/json" --body-file req.json http://localhost:8080/tx`,
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{argsHint: "the URL to load, e.g. perfscope load -d 10s 'http://127.0.0.1:8080/'"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, report.Formats()...); err != nil {
				return err
			}
			cfg, err := lf.config(args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if err := lf.check(ctx, cfg); err != nil {
				return err
			}
			update, finish := newLoadProgress(quiet, "load")
			cfg.Progress = update
			res, err := loadgen.Run(ctx, cfg)
			finish()
			if err != nil {
				return err
			}
			if err := report.WriteLoad(cmd.OutOrStdout(), report.Format(format), res); err != nil {
				return err
			}
			if err := loadFailed(res); err != nil {
				return err
			}
			if res.Interrupted {
				// 130 is what shells report for a command stopped by Ctrl-C.
				return exitError{code: 130, msg: "interrupted: the results are partial"}
			}
			return nil
		},
	}
	lf.register(c.Flags())
	addFormatFlag(c, &format, report.Formats()...)
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar (there is none either when stderr is not a terminal)")
	return c
}
