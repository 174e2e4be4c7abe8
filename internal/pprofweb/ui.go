// Package pprofweb serves pprof's own web UI (flame graph, top, graph,
// source, peek) for profiles already in memory, built with pprof's driver
// and mounted on a caller's mux instead of a listener of its own.
//
// Profiles come from outside, so the UI is confined: its source view reads
// only files inside one source directory, never a path a profile names, and
// the views that would write the server's configuration or run objdump on
// a binary a profile names are left out.
package pprofweb

import (
	"container/list"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"
)

// A Key names one UI: the profile of a kind of run Head, or with Base, the
// difference head minus base as pprof -diff_base shows it.
type Key struct {
	Base, Head, Kind string
	// Absolute shows a difference as it is, not normalized: for
	// profiles whose values are already on one scale (per operation).
	Absolute bool
}

// Config configures UIs.
type Config struct {
	// Max is how many UIs are kept; a UI holds its profiles in memory.
	// Default 16.
	Max int
	// SourceDir is the only directory whose files the source view shows;
	// "" shows none.
	SourceDir string
}

// UIs holds pprof web UIs by key, the most recently used.
type UIs struct {
	cfg Config
	// build serialises driver.PProf: it sets package-level state in
	// pprof's driver (its interactive mode, its current configuration)
	// while it parses flags.
	build sync.Mutex

	mu      sync.Mutex
	order   *list.List // of *entry, most recent first
	entries map[Key]*list.Element
}

type entry struct {
	key  Key
	once sync.Once
	ui   *UI
	err  error
}

// New returns an empty set of UIs.
func New(cfg Config) *UIs {
	if cfg.Max <= 0 {
		cfg.Max = 16
	}
	return &UIs{cfg: cfg, order: list.New(), entries: make(map[Key]*list.Element)}
}

// A UI is pprof's web UI for one profile or pair: its handlers by path.
type UI struct {
	handlers map[string]http.Handler
}

// Get returns the UI of key, building it on first use with the profiles
// load returns (base nil but for a difference). A failure is not kept:
// the next request tries again.
func (u *UIs) Get(key Key, load func() (head, base *profile.Profile, err error)) (*UI, error) {
	u.mu.Lock()
	el, ok := u.entries[key]
	if ok {
		u.order.MoveToFront(el)
	} else {
		el = u.order.PushFront(&entry{key: key})
		u.entries[key] = el
		for u.order.Len() > u.cfg.Max {
			last := u.order.Back()
			u.order.Remove(last)
			delete(u.entries, last.Value.(*entry).key)
		}
	}
	e := el.Value.(*entry)
	u.mu.Unlock()

	e.once.Do(func() {
		head, base, err := load()
		if err == nil {
			e.ui, err = u.build1(head, base, key.Absolute)
		}
		e.err = err
	})
	if e.err != nil {
		u.mu.Lock()
		if cur, ok := u.entries[key]; ok && cur == el {
			u.order.Remove(el)
			delete(u.entries, key)
		}
		u.mu.Unlock()
	}
	return e.ui, e.err
}

// ForgetRun drops the UIs that show a profile of run id.
func (u *UIs) ForgetRun(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for key, el := range u.entries {
		if key.Head == id || key.Base == id {
			u.order.Remove(el)
			delete(u.entries, key)
		}
	}
}

// build1 runs pprof's driver on head (minus base, when given, as
// pprof -diff_base, normalized unless absolute), both confined to the
// source directory, and returns its web UI.
func (u *UIs) build1(head, base *profile.Profile, absolute bool) (*UI, error) {
	u.build.Lock()
	defer u.build.Unlock()
	// pprof keeps its configuration between runs of its driver: every
	// option a difference sets is set explicitly for a single profile too.
	args := []string{"-http=127.0.0.1:0", "-no_browser", "-symbolize=none", "-trim_path=" + noTrim, "-normalize=false"}
	profiles := fetcher{headSource: confine(head, u.cfg.SourceDir)}
	if base != nil {
		// Normalized: head is scaled to base's total, so that runs of
		// different lengths compare shares rather than absolute values,
		// and the root reads about 0 rather than "166.6%".
		args = append(args, "-diff_base="+baseSource)
		if !absolute {
			args = append(args, "-normalize=true")
		}
		profiles[baseSource] = confine(base, u.cfg.SourceDir)
	}
	args = append(args, headSource)
	var handlers map[string]http.Handler
	ui := &quietUI{}
	err := driver.PProf(&driver.Options{
		Flagset: newFlags(args),
		Fetch:   profiles,
		UI:      ui,
		HTTPServer: func(args *driver.HTTPServerArgs) error {
			handlers = args.Handlers
			return nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("pprof web UI: %w%s", err, ui.lastErr())
	}
	if handlers == nil {
		return nil, fmt.Errorf("pprof web UI did not start%s", ui.lastErr())
	}
	// Saved configurations are written to the server's home directory
	// and shared by every viewer: not something a reader may change.
	// Disassembly runs objdump on whatever binary an uploaded profile
	// names on the server's disk.
	delete(handlers, "/saveconfig")
	delete(handlers, "/deleteconfig")
	delete(handlers, "/disasm")
	return &UI{handlers: handlers}, nil
}

// Serve answers one request for the UI mounted under prefix, such as
// /runs/ID/pprof/cpu, view being the path below it (flamegraph, top, ...;
// "" for the root). It reports false, having written nothing, when pprof
// has no such view.
func (ui *UI) Serve(w http.ResponseWriter, r *http.Request, prefix, view string) bool {
	if view == "" && !strings.HasSuffix(r.URL.Path, "/") {
		// pprof's links are relative ("./top"): the UI's root
		// must end in a slash.
		http.Redirect(w, r, prefix+"/", http.StatusMovedPermanently)
		return true
	}
	h, ok := ui.handlers["/"+view]
	if !ok {
		return false
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + view
	h.ServeHTTP(w, r2)
	return true
}
