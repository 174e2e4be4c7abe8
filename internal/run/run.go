// Package run is the model of a saved profiling run: a directory holding
// run.json, which describes the run, and one standard .pb.gz file per
// profile. Capture writes runs; analysis, reports, the store and the
// dashboard read them through this package and nothing else.
package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/loadgen"
)

// Profile kinds, also the base names of the saved files (<kind>.pb.gz).
// CPU, allocs, heap, block and mutex cover the profile window; in the heap
// profile's inuse_* values that makes them the change in live memory over
// the window, as with pprof's own heap?seconds=N.
const (
	KindCPU            = "cpu"
	KindAllocs         = "allocs"
	KindHeap           = "heap"
	KindBlock          = "block"
	KindMutex          = "mutex"
	KindGoroutineStart = "goroutine_start" // goroutines when the window opens
	KindGoroutineEnd   = "goroutine_end"   // goroutines when the window closes
)

// A Run is one saved profiling run; it is written as run.json in its directory.
// Its JSON field names are stable.
type Run struct {
	ID     string `json:"id"`
	Dir    string `json:"-"` // where it was loaded from or saved to
	Target string `json:"target"`
	// TargetCPUs is how many CPUs the target could use, when the capture
	// could tell (a target on the capturing machine has its CPUs); 0 when
	// unknown. Recorded so that the run reads the same wherever it is
	// analysed.
	TargetCPUs int    `json:"target_cpus,omitempty"`
	PprofURL   string `json:"pprof_url"`
	// PprofSource says where PprofURL came from (capture's PprofGiven,
	// PprofTarget or PprofFallback); empty when no pprof endpoint was
	// usable.
	PprofSource string    `json:"pprof_source,omitempty"`
	Args        []string  `json:"args,omitempty"` // the command line that made it
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	Warmup      float64   `json:"warmup_seconds"`
	Window      float64   `json:"profile_window_seconds"`
	Version     string    `json:"perfscope_version"`
	GitCommit   string    `json:"git_commit,omitempty"`
	GitDirty    bool      `json:"git_dirty,omitempty"`
	// GitBranch, GitSubject and GitAuthor are the commit's branch
	// (empty on a detached HEAD), subject and author's name.
	GitBranch  string          `json:"git_branch,omitempty"`
	GitSubject string          `json:"git_subject,omitempty"`
	GitAuthor  string          `json:"git_author,omitempty"`
	Load       *loadgen.Result `json:"load,omitempty"`
	Profiles   []ProfileFile   `json:"profiles"`
	// Interrupted is set when the run stopped early (Ctrl-C, a cancelled
	// context) or never finished (the process died: run.json is first
	// written with Interrupted set, then rewritten when the run ends).
	Interrupted bool `json:"interrupted"`
	// Error is why the load itself failed, when it did.
	Error string `json:"error,omitempty"`
	// Notes are plain-language remarks about the capture (an empty block
	// profile and how to enable it, a CPU profile refused because another
	// profiler was running, ...).
	Notes []string `json:"notes,omitempty"`
	// Limits bound what Open reads of each profile; zero values are
	// fetch's defaults. The dashboard sets its own.
	Limits fetch.Limits `json:"-"`
	// PprofUnverified is set when the capture was told not to prove that
	// the pprof endpoint belongs to the target's process
	// (--pprof-unverified).
	PprofUnverified bool `json:"pprof_unverified,omitempty"`
}

// A ProfileFile records one profile of a run: where it was saved, or why not.
type ProfileFile struct {
	Kind    string `json:"kind"`
	File    string `json:"file,omitempty"` // relative to the run directory
	URL     string `json:"url"`
	Samples int    `json:"samples"`
	// Seconds is the time the profile covers: the window for CPU and
	// delta profiles, 0 for point-in-time goroutine profiles.
	Seconds float64 `json:"seconds,omitempty"`
	// Error says why the profile is missing or, next to File, why it
	// covers less than the window.
	Error string `json:"error,omitempty"`
}

// Lookup returns the record of one profile kind of the run.
func (r *Run) Lookup(kind string) (ProfileFile, bool) {
	for _, pf := range r.Profiles {
		if pf.Kind == kind {
			return pf, true
		}
	}
	return ProfileFile{}, false
}

// Has reports whether the run saved a profile of the kind.
func (r *Run) Has(kind string) bool {
	pf, ok := r.Lookup(kind)
	return ok && pf.File != ""
}

// Path returns the path of the saved profile of the kind, or "" when the
// run has none.
func (r *Run) Path(kind string) string {
	pf, ok := r.Lookup(kind)
	if !ok || pf.File == "" {
		return ""
	}
	return filepath.Join(r.Dir, pf.File)
}

// Open reads and parses the saved profile of the kind. When the run has
// none, the error says why, as recorded at capture time.
func (r *Run) Open(kind string) (*profile.Profile, error) {
	pf, ok := r.Lookup(kind)
	switch {
	case !ok:
		return nil, fmt.Errorf("run %s has no %s profile", r.ID, kind)
	case pf.File == "" && pf.Error != "":
		return nil, fmt.Errorf("run %s has no %s profile: %s", r.ID, kind, pf.Error)
	case pf.File == "":
		return nil, fmt.Errorf("run %s has no %s profile", r.ID, kind)
	}
	path := filepath.Join(r.Dir, pf.File)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s profile of run %s: %w", kind, r.ID, err)
	}
	defer f.Close()
	p, _, err := fetch.Parse(context.Background(), f, r.Limits)
	if err != nil {
		return nil, fmt.Errorf("read %s profile %s: %w", kind, path, err)
	}
	return p, nil
}

// Seconds is how long each saved profile covers, by kind, as the capture
// recorded it; kinds without a recorded length are absent.
func (r *Run) Seconds() map[string]float64 {
	m := map[string]float64{}
	for _, pf := range r.Profiles {
		if pf.Seconds > 0 {
			m[pf.Kind] = pf.Seconds
		}
	}
	return m
}
