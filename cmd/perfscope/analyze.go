package main

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/perfscope/perfscope/internal/capture"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report"
)

// reportFlags are the flags of every command that renders a run's report
// (profile, report, demo).
type reportFlags struct {
	format string
	opts   profiles.Options
}

func (f *reportFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.opts.All, "all", false, "show every function and site as pprof does, nothing folded")
	fs.StringVar(&f.opts.Route, "route", "", "only CPU and goroutine samples whose http.route label matches `PATTERN`")
	fs.IntVar(&f.opts.Top, "top", profiles.DefaultTop, "rows per table")
}

func (f *reportFlags) check() error {
	if err := checkFormat(f.format, report.Formats()...); err != nil {
		return err
	}
	if f.opts.Top < 1 {
		return usagef("--top %d: give a number of rows, 1 or more", f.opts.Top)
	}
	return nil
}

// analyzeRun computes a run's analysis and findings. Problems met on the way
// are part of the analysis itself (its warnings), so they are not returned.
func analyzeRun(run *capture.Run, opts profiles.Options) (*profiles.Analysis, []report.Finding) {
	a, _ := profiles.Analyze(run, opts)
	return a, nil
}

// writeRunReport analyses run and renders its report to w.
func writeRunReport(w io.Writer, f reportFlags, run *capture.Run) (*profiles.Analysis, error) {
	a, findings := analyzeRun(run, f.opts)
	return a, report.Write(w, report.Format(f.format), a, findings)
}
