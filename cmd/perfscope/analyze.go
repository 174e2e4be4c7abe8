package main

import (
	"context"
	"io"
	"net"
	"net/url"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/perfscope/perfscope/internal/capture"
	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/report"
)

// reportFlags are the flags of every command that renders a run's report
// (profile, report, demo).
type reportFlags struct {
	format    string
	opts      profiles.Options
	sourceDir string
	noSource  bool
	list      int
}

func (f *reportFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.opts.All, "all", false, "show every function and site as pprof does, nothing folded")
	fs.StringVar(&f.opts.Route, "route", "", "only CPU and goroutine samples whose http.route label matches `PATTERN`")
	fs.IntVar(&f.opts.Top, "top", profiles.DefaultTop, "rows per table")
	fs.StringVar(&f.sourceDir, "source-dir", "",
		"checkout of the profiled service's source, for source lines and the compiler's reasons (default: the current module, when it holds the service's main package)")
	fs.BoolVar(&f.noSource, "no-source", false, "skip building the source for the compiler's reasons")
	fs.IntVar(&f.list, "list", 0, "list the source of the `N` hottest user functions of each profile line by line, with each line's cost (as pprof's list)")
}

func (f *reportFlags) check() error {
	if err := checkFormat(f.format, report.Formats()...); err != nil {
		return err
	}
	if f.list < 0 {
		return usagef("--list %d: give a number of functions, 0 or more", f.list)
	}
	if f.opts.Top < 1 {
		return usagef("--top %d: give a number of rows, 1 or more", f.opts.Top)
	}
	return nil
}

// analyzeRun computes a run's analysis and its findings, with the
// compiler's reasons when the source is at hand. Problems met on the way
// are part of the analysis itself (its warnings), so they are not returned.
func analyzeRun(ctx context.Context, f reportFlags, run *capture.Run) (*profiles.Analysis, []findings.Finding) {
	a, _ := profiles.Analyze(run, f.opts)
	warn := func(errs []error) {
		for _, err := range errs {
			a.Warnings = append(a.Warnings, err.Error())
		}
	}
	var ix *escape.Index
	if !f.noSource && len(a.Profiles) > 0 {
		built, errs := findings.CompilerIndex(ctx, a, f.sourceDir)
		warn(errs)
		ix = built
	}
	if f.list > 0 {
		views, errs := profiles.SourceListings(a, profiles.SourceOptions{Top: f.list, SourceDir: f.sourceDir})
		warn(errs)
		a.Source = views
	}
	fs, errs := findings.Diagnose(a, ix, findings.Options{SourceDir: f.sourceDir, AvailableCores: targetCores(run)})
	warn(errs)
	return a, fs
}

// targetCores is how many CPUs the target could use, when perfscope can
// tell: a target on this machine has this machine's.
func targetCores(run *capture.Run) float64 {
	u, err := url.Parse(run.Target)
	if err != nil {
		return 0
	}
	if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
		return float64(runtime.NumCPU())
	}
	return 0
}

// writeRunReport analyses run and renders its report to w.
func writeRunReport(ctx context.Context, w io.Writer, f reportFlags, run *capture.Run) (*profiles.Analysis, error) {
	a, fs := analyzeRun(ctx, f, run)
	return a, report.Write(w, report.Format(f.format), a, fs)
}
