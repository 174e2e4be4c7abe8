package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/run"
)

// reportFlags are the flags of every command that renders a run's report
// (profile, report, demo).
type reportFlags struct {
	format string
	opts   analysis.Options
	source analysis.Source
}

func (f *reportFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.opts.Profiles.All, "all", false, "show every function and site as pprof does, nothing folded")
	fs.StringVar(&f.opts.Profiles.Route, "route", "",
		"only CPU and goroutine samples whose http.route label is `PATTERN` or matches it as a regular expression")
	fs.IntVar(&f.opts.Profiles.Top, "top", profiles.DefaultTop, "`N` rows per table")
	fs.StringVar(&f.source.Dir, "source-dir", "",
		"checkout `DIR` of the profiled service's source, for source lines and the compiler's reasons (default: the current module, when it holds the service's main package)")
	fs.BoolVar(&f.opts.NoCompiler, "no-source", false, "findings from the profiles alone, without building the source for the compiler's reasons")
	fs.IntVar(&f.opts.List, "list", 0, "list the source of the `N` hottest user functions of each profile line by line, with each line's cost (as pprof's list)")
}

func (f *reportFlags) check() error {
	if err := checkFormat(f.format, report.Formats()...); err != nil {
		return err
	}
	if f.opts.List < 0 {
		return usagef("--list %d: give a number of functions, 0 or more", f.opts.List)
	}
	if f.opts.Profiles.Top < 1 {
		return usagef("--top %d: give a number of rows, 1 or more", f.opts.Profiles.Top)
	}
	return nil
}

// writeRunReport analyses a saved run and renders its report to w, as
// profile, report and demo print it, and returns the analysis.
func writeRunReport(ctx context.Context, w io.Writer, f reportFlags, r *run.Run) (*analysis.Result, error) {
	return writeReport(ctx, w, f, analysis.FromRun(r))
}

// writeReport analyses in with f's source and options and renders its
// report to w.
func writeReport(ctx context.Context, w io.Writer, f reportFlags, in analysis.Input) (*analysis.Result, error) {
	if f.opts.Status == nil {
		f.opts.Status = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
	}
	in.Source = f.source
	res := analysis.Analyze(ctx, in, f.opts)
	return res, report.Write(w, report.Format(f.format), res.Analysis, res.Findings)
}
