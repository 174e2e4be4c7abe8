package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/report"
)

// newLoadProgress returns a loadgen.Config.Progress that draws a bar with
// the current request rate and error count on stderr, and a finish func
// that clears it once the run returns. When quiet is set or stderr is not a
// terminal, update is nil (so the run does not even sample progress) and
// finish does nothing: logs and pipes get only the result.
func newLoadProgress(quiet bool, label string) (update func(loadgen.Progress), finish func()) {
	if quiet || !stderrIsTerminal() {
		return nil, func() {}
	}
	var bar *progressbar.ProgressBar
	update = func(p loadgen.Progress) {
		if bar == nil {
			// The bar counts requests for -n and milliseconds for -d.
			max := p.Planned
			if max <= 0 {
				max = p.PlannedDur.Milliseconds()
			}
			bar = progressbar.NewOptions64(max,
				progressbar.OptionSetWriter(os.Stderr),
				progressbar.OptionSetWidth(30),
				progressbar.OptionSetPredictTime(false),
				progressbar.OptionSetElapsedTime(true),
				progressbar.OptionThrottle(0),
				progressbar.OptionClearOnFinish(),
			)
		}
		// Both calls draw; the second frame, complete, is the one that stays.
		bar.Describe(report.LoadProgress(label, p.CurrentRPS, p.Errors))
		if p.Planned > 0 {
			_ = bar.Set64(min(p.Requests, p.Planned))
		} else {
			_ = bar.Set64(min(p.Elapsed.Milliseconds(), p.PlannedDur.Milliseconds()))
		}
	}
	finish = func() {
		if bar != nil {
			_ = bar.Clear()
			_ = bar.Exit()
		}
	}
	return update, finish
}

// terminalProgress shows one status line, rewritten in place: where the
// job is, and when bench counted its benchmarks beforehand, benchmark k of
// n with the time elapsed and an estimate of the time left.
func terminalProgress(w io.Writer) func(bench.Progress) {
	start := time.Now()
	return func(p bench.Progress) {
		var elapsed, left time.Duration
		if p.Benchmarks > 0 {
			elapsed = time.Since(start).Round(time.Second)
			if f := p.Fraction(); f > 0 && f < 1 {
				left = time.Duration(float64(elapsed) * (1 - f) / f).Round(time.Second)
			}
		}
		fmt.Fprint(w, "\r\033[K"+report.BenchProgress(p, elapsed, left))
	}
}
