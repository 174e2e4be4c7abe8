// Package analysis is the one pipeline from a saved run to what every
// output shows: the profiles' analysis and the findings diagnosed on it.
// The CLI, the re-rendered report, the demo and the dashboard all call
// Analyze, so one run reads the same wherever it is shown.
package analysis

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strings"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

// Options configure Analyze. The zero value is the default report: the
// default tables, the compiler's reasons built from the current module,
// no source listings.
type Options struct {
	// Profiles chooses what the tables show (rows, folding, a route).
	Profiles profiles.Options
	// SourceDir is a checkout of the profiled service. Empty means the
	// current module for the compiler's reasons, and source files read
	// where the profiles say they were built.
	SourceDir string
	// ConfineSource reads source files only inside SourceDir, never at
	// a path a profile names elsewhere: the dashboard analyses profiles
	// anyone with a token uploaded.
	ConfineSource bool
	// NoCompiler skips building the service's source for the compiler's
	// reasons (why a value escapes to the heap). The findings and their
	// shares are the same either way; without it, the findings that
	// would quote the compiler say that its reasons are not shown.
	NoCompiler bool
	// Status, when set, is told in one line of a step that takes seconds
	// without output before it starts: the build for the compiler's
	// reasons compiles the service (about 20 seconds on a cold cache).
	Status func(msg string)
	// List, when positive, adds per-line listings of the List hottest
	// user functions of each profile (pprof's list).
	List int
}

// A Result is a run's analysis and its findings.
type Result struct {
	// Analysis is the profiles' analysis. Its Warnings include every
	// problem met on the way, so that a report rendered from it alone
	// tells the reader.
	Analysis *profiles.Analysis
	// Findings are the diagnosed problems, heaviest first.
	Findings []findings.Finding
	// CompilerSkipped is set when the compiler's reasons were not sought
	// (Options.NoCompiler) although the run has profiles to diagnose.
	CompilerSkipped bool
	// Warnings are the problems that left parts of the result missing
	// or partial: a profile that could not be read, source that could
	// not be built or does not match the profiles.
	Warnings []error
}

// Analyze analyses a saved run and diagnoses it. It never fails: what
// cannot be computed is left out and said in Result.Warnings, so the
// rest of the report still reaches the reader. ctx bounds the build of
// the source for the compiler's reasons.
func Analyze(ctx context.Context, r *run.Run, opts Options) *Result {
	a, errs := profiles.Analyze(r, opts.Profiles)
	res := &Result{Analysis: a, Warnings: errs}
	warn := func(errs []error) {
		for _, err := range errs {
			a.Warnings = append(a.Warnings, err.Error())
		}
		res.Warnings = append(res.Warnings, errs...)
	}
	var ix *escape.Index
	if len(a.Profiles) > 0 {
		if opts.NoCompiler {
			res.CompilerSkipped = true
		} else {
			if opts.Status != nil {
				dir := opts.SourceDir
				if dir == "" {
					dir = "the current module"
				}
				opts.Status("building " + dir + " for compiler diagnostics")
			}
			built, errs := findings.CompilerIndex(ctx, a, opts.SourceDir)
			warn(errs)
			ix = built
		}
	}
	if opts.List > 0 {
		views, errs := profiles.SourceListings(a, profiles.SourceOptions{Top: opts.List, SourceDir: opts.SourceDir, Confined: opts.ConfineSource})
		warn(errs)
		a.Source = views
	}
	fs, errs := findings.Diagnose(a, ix, findings.Options{SourceDir: opts.SourceDir, ConfineSource: opts.ConfineSource, AvailableCores: targetCores(r)})
	warn(errs)
	res.Findings = fs
	return res
}

// NoProfileRead returns an error when the run recorded profiles and not one
// of them could be read (the files are damaged, missing or not profiles,
// or none was saved): what is left of the run is its load result, which
// says nothing of the service's code. The error names the run (its
// directory) and why each profile could not be read. A run that recorded
// no profile (captured with --allow-no-profiles, or interrupted before its
// window opened) is not this case: nil.
func (res *Result) NoProfileRead() error {
	r := &res.Analysis.Run
	if len(r.Profiles) == 0 || len(res.Analysis.Profiles) > 0 {
		return nil
	}
	// The last error recorded for a kind is the reading's, when there
	// was one; the capture's comes first.
	why := map[string]string{}
	for _, pe := range res.Analysis.ProfileErrors {
		why[pe.Kind] = pe.Error
	}
	var reasons []string
	for _, pf := range r.Profiles {
		what := pf.Kind
		if pf.File != "" {
			what = pf.File
		} else if why[pf.Kind] == "" {
			why[pf.Kind] = "not saved"
		}
		reasons = append(reasons, what+": "+why[pf.Kind])
	}
	// The directory is how the user named the run.
	name := r.Dir
	if name == "" {
		name = r.ID
	}
	return fmt.Errorf("run %s: none of its profiles could be read (%s)", name, strings.Join(reasons, "; "))
}

// targetCores is how many CPUs the target could use, when the run tells.
// Runs saved before the capture recorded it fall back to this machine's
// CPUs for a target on loopback, as they were analysed then.
func targetCores(r *run.Run) float64 {
	if r.TargetCPUs > 0 {
		return float64(r.TargetCPUs)
	}
	u, err := url.Parse(r.Target)
	if err != nil {
		return 0
	}
	if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
		return float64(runtime.NumCPU())
	}
	return 0
}
