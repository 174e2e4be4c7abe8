// Package analysis is the one pipeline from a set of profiles over a
// window to what every output shows: the profiles' analysis and the
// findings diagnosed on it. Its input is profiles, not a directory: a saved
// run is one source of an Input (FromRun), profiles scraped from a live
// service over a time range are another, with no load result. The CLI, the
// re-rendered report, the demo and the dashboard all call Analyze, so the
// same profiles read the same wherever they are shown.
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

// An Input is what Analyze analyses: a set of profiles over one window
// (profiles.Set: the profiles by kind, the window, the load result when
// there was one, the target) and the profiled service's source.
type Input struct {
	profiles.Set
	// Source is where the profiled service's source is; the zero value
	// is the current module, with files read where the profiles say.
	Source Source
}

// A Source locates the profiled service's source.
type Source struct {
	// Dir is a checkout of the profiled service. Empty means the current
	// module for the compiler's reasons, and source files read where the
	// profiles say they were built.
	Dir string
	// Confined reads source files only inside Dir, never at a path a
	// profile names elsewhere: the dashboard analyses profiles anyone
	// with a token uploaded.
	Confined bool
}

// FromRun is the Input of a saved run: its profiles, read through fetch's
// bounded reader, its window, load result and target. Profiles that
// cannot be read are left out and said in the analysis. The source is
// the zero Source; set it on the result.
func FromRun(r *run.Run) Input {
	return Input{Set: profiles.ReadRun(r)}
}

// Options configure Analyze. The zero value is the default report: the
// default tables, the compiler's reasons built from the input's source,
// no source listings.
type Options struct {
	// Profiles chooses what the tables show (rows, folding, a route).
	Profiles profiles.Options
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

// A Result is an input's analysis and its findings.
type Result struct {
	// Analysis is the profiles' analysis. Its Warnings include every
	// problem met on the way, so that a report rendered from it alone
	// tells the reader.
	Analysis *profiles.Analysis
	// Findings are the diagnosed problems, heaviest first.
	Findings []findings.Finding
	// CompilerSkipped is set when the compiler's reasons were not sought
	// (Options.NoCompiler) although the input has profiles to diagnose.
	CompilerSkipped bool
	// Warnings are the problems that left parts of the result missing
	// or partial: a profile that could not be read, source that could
	// not be built or does not match the profiles.
	Warnings []error
}

// Analyze analyses a set of profiles and diagnoses it. It never fails:
// what cannot be computed is left out and said in Result.Warnings, so the
// rest of the report still reaches the reader. Without a load result the
// analysis has no per-request figures and its notes say so; the findings
// rest on the profiles alone either way. ctx bounds the build of the
// source for the compiler's reasons.
func Analyze(ctx context.Context, in Input, opts Options) *Result {
	a, errs := profiles.Analyze(in.Set, opts.Profiles)
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
				dir := in.Source.Dir
				if dir == "" {
					dir = "the current module"
				}
				opts.Status("building " + dir + " for compiler diagnostics")
			}
			built, errs := findings.CompilerIndex(ctx, a, in.Source.Dir)
			warn(errs)
			ix = built
		}
	}
	if opts.List > 0 {
		views, errs := profiles.SourceListings(a, profiles.SourceOptions{Top: opts.List, SourceDir: in.Source.Dir, Confined: in.Source.Confined})
		warn(errs)
		a.Source = views
	}
	fs, errs := findings.Diagnose(a, ix, findings.Options{SourceDir: in.Source.Dir, ConfineSource: in.Source.Confined, AvailableCores: targetCores(in.Target, in.TargetCPUs)})
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

// targetCores is how many CPUs the target could use, when the input tells.
// Runs saved before the capture recorded it fall back to this machine's
// CPUs for a target on loopback, as they were analysed then.
func targetCores(target string, cpus int) float64 {
	if cpus > 0 {
		return float64(cpus)
	}
	u, err := url.Parse(target)
	if err != nil {
		return 0
	}
	if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
		return float64(runtime.NumCPU())
	}
	return 0
}
