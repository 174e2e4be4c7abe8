package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/loadgen"
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

--format json prints the loadgen.Result fields: url, method, mode ("closed" or
"open"), concurrency, rate, keepalive, start, duration_seconds, requests,
successes, failures, errors (by kind: connect_refused, timeout, reset, closed,
malformed, other, status_NNN), throughput_rps, bytes_read, bytes_written,
latency (min_ms, mean_ms, p50_ms, p90_ms, p99_ms, p999_ms, max_ms),
late (open loop: count, max_lag_ms, dropped), interrupted, status_codes.`,
		Example: `  perfscope load http://localhost:8080/
  perfscope load -c 64 -d 30s http://localhost:8080/api
  perfscope load -n 10000 --no-keepalive http://localhost:8080/
  perfscope load --rate 2000 -c 100 -d 1m http://localhost:8080/
  perfscope load -m POST -H "Content-Type: application/json" --body-file req.json http://localhost:8080/tx`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
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
			out := cmd.OutOrStdout()
			if format == "json" {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(res); err != nil {
					return fmt.Errorf("write result: %w", err)
				}
			} else {
				writeLoadText(out, res)
			}
			if res.Interrupted {
				// 130 is what shells report for a command stopped by Ctrl-C.
				return exitError{code: 130, msg: "interrupted: the results are partial"}
			}
			return nil
		},
	}
	lf.register(c.Flags())
	addFormatFlag(c, &format, "text", "json")
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar (there is none either when stderr is not a terminal)")
	return c
}

// writeLoadText renders a load result for people, in the spirit of wrk:
// what ran, how much got through, how long it took, what went wrong.
func writeLoadText(w io.Writer, r *loadgen.Result) {
	mode := fmt.Sprintf("closed loop, %d connections", r.Concurrency)
	if r.Mode == "open" {
		mode = fmt.Sprintf("open loop at %g req/s, up to %d in flight", r.Rate, r.Concurrency)
	}
	if !r.KeepAlive {
		mode += ", no keep-alive"
	}
	fmt.Fprintf(w, "%s %s — %s\n", r.Method, r.URL, mode)
	if r.Interrupted {
		fmt.Fprintln(w, "  (interrupted: partial results)")
	}
	fmt.Fprintf(w, "  requests     %d in %s, %d ok, %d failed\n",
		r.Requests, time.Duration(r.DurationSeconds*1e9).Round(time.Millisecond), r.Successes, r.Failures)
	fmt.Fprintf(w, "  throughput   %.1f req/s\n", r.Throughput)
	fmt.Fprintf(w, "  transfer     %s read, %s written\n", byteSize(r.BytesRead), byteSize(r.BytesWritten))
	if r.Requests > r.Failures || r.Latency.Max > 0 {
		l := r.Latency
		fmt.Fprintf(w, "  latency      min %s  mean %s  max %s\n", ms(l.Min), ms(l.Mean), ms(l.Max))
		fmt.Fprintf(w, "               p50 %s  p90 %s  p99 %s  p99.9 %s\n", ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999))
	}
	if r.Late != nil {
		fmt.Fprintf(w, "  late sends   %d more than 1ms late (worst %s), %d never sent\n",
			r.Late.Count, ms(r.Late.MaxLagMs), r.Late.Dropped)
		if r.Late.Count+r.Late.Dropped > 0 {
			fmt.Fprintln(w, "               the generator could not keep the rate: raise -c, or the service is saturated")
		}
	}
	if len(r.Errors) > 0 {
		fmt.Fprintln(w, "  errors")
		// Most frequent first: the top line is what to look at.
		kinds := slices.SortedFunc(maps.Keys(r.Errors), func(a, b string) int {
			if d := r.Errors[b] - r.Errors[a]; d != 0 {
				if d > 0 {
					return 1
				}
				return -1
			}
			return strings.Compare(a, b)
		})
		for _, k := range kinds {
			fmt.Fprintf(w, "    %-16s %d\n", k, r.Errors[k])
		}
	}
}

// ms formats milliseconds with precision that suits their size.
func ms(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2fs", v/1000)
	case v >= 10:
		return fmt.Sprintf("%.1fms", v)
	default:
		return fmt.Sprintf("%.3fms", v)
	}
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
