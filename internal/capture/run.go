// Package capture fetches profiles from a service's pprof endpoints while a
// load runs against it, and keeps everything it measured in a run directory:
// the profiles as standard .pb.gz files and run.json describing the run.
// A run is saved even when parts of it fail; failures are recorded, not fatal.
package capture

import (
	"time"

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
	ID       string `json:"id"`
	Dir      string `json:"-"` // where it was loaded from or saved to
	Target   string `json:"target"`
	PprofURL string `json:"pprof_url"`
	// PprofSource says where PprofURL came from: PprofGiven, PprofTarget
	// or PprofFallback; empty when no pprof endpoint was usable.
	PprofSource string          `json:"pprof_source,omitempty"`
	Args        []string        `json:"args,omitempty"` // the command line that made it
	Start       time.Time       `json:"start"`
	End         time.Time       `json:"end"`
	Warmup      float64         `json:"warmup_seconds"`
	Window      float64         `json:"profile_window_seconds"`
	Version     string          `json:"perfscope_version"`
	GitCommit   string          `json:"git_commit,omitempty"`
	GitDirty    bool            `json:"git_dirty,omitempty"`
	Load        *loadgen.Result `json:"load,omitempty"`
	Profiles    []ProfileFile   `json:"profiles"`
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
