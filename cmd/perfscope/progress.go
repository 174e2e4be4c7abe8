package main

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/loadgen"
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
		bar.Describe(fmt.Sprintf("%s %9.0f req/s %7d errors", label, p.CurrentRPS, p.Errors))
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

// terminalProgress shows one status line, rewritten in place.
func terminalProgress(w io.Writer) func(bench.Progress) {
	return func(p bench.Progress) {
		state := "running"
		if p.Done {
			state = "done   "
		}
		side := ""
		if p.Side != "" {
			side = p.Side + " "
		}
		fmt.Fprintf(w, "\r\033[K[%d/%d] %s  %s%s  %s round %d/%d", p.PackageIndex, p.Packages, p.Package, side, state, p.Benchmark, p.Round, p.Rounds)
	}
}
