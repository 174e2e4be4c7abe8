// Package capture takes a service's profiles over one load window: it
// decides what to fetch when, relative to the load, fetches it from the
// service's pprof endpoints through package fetch, and saves everything
// it measured as a run (see package run): the profiles as standard .pb.gz files and run.json
// describing the run. A run is saved even when parts of it fail; failures
// are recorded, not fatal.
package capture

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/run"
)

// Defaults for Options.
const (
	DefaultMaxWarmup    = time.Second
	DefaultCPUChunk     = 2 * time.Second
	DefaultFetchTimeout = fetch.DefaultTimeout
)

// endGrace bounds the snapshot fetches an interruption waits for (the
// start snapshots in flight, then the end-of-window ones): they
// turn the start snapshots into deltas and take milliseconds on a live
// target, so they are worth a short wait, but not a long one.
const endGrace = 2 * time.Second

// Options configure Profile. Zero values mean the documented defaults.
type Options struct {
	// Load is the load to run. Its Progress callback, if any, is called
	// as loadgen documents.
	Load loadgen.Config

	// PprofURL is the base URL of the target's pprof endpoints, such as
	// "http://127.0.0.1:6060/debug/pprof/". When empty, the target's origin
	// + "/debug/pprof/" is tried, then, if the target runs on this machine,
	// FallbackPprofURL. Run.PprofSource records which one was used.
	PprofURL string
	// FallbackPprofURL is tried when PprofURL is empty and the target's
	// origin serves no pprof. Default DefaultFallbackPprofURL; "-" turns
	// the fallback off.
	FallbackPprofURL string
	// Header is sent with pprof requests on top of Load.Header, which
	// applies to them too (an authorization header usually covers both).
	Header http.Header

	// Warmup is how long the load runs before profiling starts, so
	// connection setup and cold caches stay out of the profiles. Zero
	// means the smaller of DefaultMaxWarmup and a tenth of the load;
	// negative means none.
	Warmup time.Duration
	// CPUChunk is the longest single CPU profile request, in whole
	// seconds. Longer windows, and loads of unknown length, are covered
	// by consecutive requests merged into one profile; an interruption
	// waits for the chunk in progress, so the profile covers the elapsed
	// window. Default DefaultCPUChunk: at most that wait after Ctrl-C, and
	// a gap of a few milliseconds between chunks.
	CPUChunk time.Duration
	// FetchTimeout bounds each profile request; a CPU profile request
	// gets its sampling time on top. Default DefaultFetchTimeout.
	FetchTimeout time.Duration
	// PprofUnverified skips the proof that the pprof endpoint belongs to
	// the process serving the load (see ErrNotTarget), for setups where it
	// cannot work, such as a proxy between perfscope and the target. The
	// run then says its profiles are unverified.
	PprofUnverified bool
	// AllowNoProfiles lets the load run when no pprof endpoint is usable:
	// the run then holds the load result and a note saying why there are
	// no profiles. Without it Profile fails before sending any load.
	AllowNoProfiles bool

	// OutDir is the run directory to create. Default run.DefaultRoot/<run ID>,
	// where the ID is the UTC start time and a short random suffix.
	OutDir string
	// Args is the command line that asked for the run, recorded with
	// credentials redacted.
	Args []string
	// Version is perfscope's version, recorded in run.json.
	Version string
	// Logf, when set, receives status lines (which pprof endpoint is used,
	// when the profile window opens).
	Logf func(format string, args ...any)
}

// withDefaults validates o and fills in defaults; it returns the parsed
// target URL too.
func (o Options) withDefaults() (Options, *url.URL, error) {
	target, err := url.Parse(o.Load.URL)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return o, nil, fmt.Errorf("target URL %q: want an http:// or https:// URL such as http://127.0.0.1:8080/", o.Load.URL)
	}
	if o.FallbackPprofURL == "" {
		o.FallbackPprofURL = DefaultFallbackPprofURL
	}
	if o.CPUChunk == 0 {
		o.CPUChunk = DefaultCPUChunk
	}
	if o.CPUChunk < time.Second {
		return o, nil, fmt.Errorf("CPU profile chunk %s: must be at least 1s", o.CPUChunk)
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	if d := o.Load.Duration; d > 0 && o.Load.Requests == 0 && o.Warmup >= d {
		return o, nil, fmt.Errorf("warm-up %s is not shorter than the load duration %s: no time would be left to profile", o.Warmup, d)
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o, target, nil
}

// Profile runs the load described by opts.Load against its target and,
// during the load, captures the target's CPU, allocs, heap, block, mutex
// and goroutine profiles from its pprof endpoints. It saves everything in a
// new run directory: <kind>.pb.gz files and run.json.
//
// Before any load it checks that the target answers and that a pprof
// endpoint serves profiles (see Options.PprofURL and AllowNoProfiles); those
// failures return an error and no run. From then on the run is saved
// whatever happens: a profile that cannot be fetched is recorded with its
// error in Run.Profiles while the others go on, and a cancelled ctx stops
// the load and the fetches promptly and saves what was measured, with
// Run.Interrupted set. Profile then returns the saved run and a nil error;
// it returns the run together with an error only when the load itself
// failed or run.json could not be written.
//
// The profile window opens after the warm-up. For a load of known length
// (Load.Duration) it lasts the rest of the load, rounded down to whole
// seconds because pprof's CPU endpoint takes whole seconds; for a load
// bounded by a request count it lasts until the load ends. Allocs, heap,
// block and mutex are deltas over the window: cumulative snapshots taken
// at its start and end, the start subtracted from the end as pprof's own
// ?seconds= does on the server, which works whether or not the window's
// length is known. CPU is one or more consecutive profile?seconds=N
// requests merged into one profile. Goroutine profiles are taken at the
// window's start and end.
func Profile(ctx context.Context, opts Options) (*run.Run, error) {
	o, target, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := loadgen.Check(ctx, o.Load); err != nil {
		return nil, err
	}
	ep, pprofErr := findPprof(ctx, o, target)
	if pprofErr != nil && (!o.AllowNoProfiles || ctx.Err() != nil) {
		return nil, pprofErr
	}
	if pprofErr == nil {
		defer ep.e.Close()
		o.Logf("capturing profiles from %s", ep.url)
	}

	start := time.Now()
	id := run.NewID(start)
	dir := o.OutDir
	if dir == "" {
		dir = filepath.Join(run.DefaultRoot, id)
	} else {
		id = filepath.Base(filepath.Clean(dir))
	}
	if _, err := os.Stat(filepath.Join(dir, run.File)); err == nil {
		return nil, fmt.Errorf("run directory %s already holds a run; choose another directory", dir)
	}
	// Saved runs live in the work tree by default; they and the output
	// directory do not make it dirty.
	git, _ := gitstate.Read(ctx, ".", o.OutDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory %s: %w", dir, err)
	}
	r := &run.Run{
		ID:          id,
		Dir:         dir,
		Target:      run.RedactURL(target.String()),
		PprofURL:    ep.url,
		PprofSource: ep.source,
		Args:        redactArgs(o.Args),
		Start:       start,
		Version:     o.Version,
		GitCommit:   git.Commit,
		GitDirty:    git.Dirty,
		GitBranch:   git.Branch,
		GitSubject:  git.Subject,
		GitAuthor:   git.Author,
		Profiles:    []run.ProfileFile{},
		// Until the final save says otherwise, a run that never
		// finished reads as interrupted.
		Interrupted:     true,
		PprofUnverified: pprofErr == nil && o.PprofUnverified,
	}
	if fetch.IsLocalHost(target.Hostname()) {
		r.TargetCPUs = runtime.NumCPU()
	}
	if pprofErr != nil {
		r.PprofSource = ""
		r.Notes = append(r.Notes, "No profiles were taken: "+pprofErr.Error()+".")
	} else if ep.note != "" {
		r.Notes = append(r.Notes, ep.note)
	}
	// A directory that cannot hold run.json cannot hold the results either:
	// better to fail now than after spending the load.
	if err := r.Save(); err != nil {
		return nil, err
	}

	s := &session{o: o, run: r}
	if pprofErr == nil {
		s.e = ep.e
	}
	res, loadErr := s.execute(ctx)

	r.End = time.Now()
	if res != nil {
		// The load sent the URL as given; the run records it redacted.
		res.URL = run.RedactURL(res.URL)
	}
	r.Load = res
	r.Interrupted = ctx.Err() != nil || (res != nil && res.Interrupted)
	if loadErr != nil && r.Interrupted && errors.Is(loadErr, context.Canceled) {
		loadErr = nil // an interruption is recorded, not a failure
	}
	if loadErr != nil {
		loadErr = fmt.Errorf("load %s: %w", r.Target, loadErr)
		// The load generator's errors quote the URL as given.
		r.Error = strings.ReplaceAll(loadErr.Error(), o.Load.URL, run.RedactURL(o.Load.URL))
	}
	if err := r.Save(); err != nil {
		return r, errors.Join(loadErr, err)
	}
	return r, loadErr
}
