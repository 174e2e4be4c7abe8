package server

import (
	"container/list"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
)

// pprofUIs holds instances of pprof's own web UI (flame graph, top, graph,
// source, peek), one per profile or profile pair, built with pprof's driver
// and mounted on the server's mux instead of a listener of their own.
type pprofUIs struct {
	// build serialises driver.PProf: it sets package-level state in
	// pprof's driver (its interactive mode, its current configuration)
	// while it parses flags.
	build sync.Mutex

	mu      sync.Mutex
	max     int
	order   *list.List // of *pprofEntry, most recent first
	entries map[string]*list.Element
}

type pprofEntry struct {
	key      string
	once     sync.Once
	handlers map[string]http.Handler
	err      error
}

func newPprofUIs(max int) *pprofUIs {
	return &pprofUIs{max: max, order: list.New(), entries: make(map[string]*list.Element)}
}

// handlers returns the UI for key, building it with load on first use. A
// UI holds its profile in memory, so only the max most recently used are
// kept.
func (u *pprofUIs) handlers(key string, load func() (head, base *profile.Profile, err error)) (map[string]http.Handler, error) {
	u.mu.Lock()
	el, ok := u.entries[key]
	if ok {
		u.order.MoveToFront(el)
	} else {
		el = u.order.PushFront(&pprofEntry{key: key})
		u.entries[key] = el
		for u.order.Len() > u.max {
			last := u.order.Back()
			u.order.Remove(last)
			delete(u.entries, last.Value.(*pprofEntry).key)
		}
	}
	e := el.Value.(*pprofEntry)
	u.mu.Unlock()

	e.once.Do(func() {
		head, base, err := load()
		if err == nil {
			e.handlers, err = u.build1(head, base)
		}
		e.err = err
	})
	if e.err != nil {
		// A failure is not cached: the file may be back next time.
		u.mu.Lock()
		if cur, ok := u.entries[key]; ok && cur == el {
			u.order.Remove(el)
			delete(u.entries, key)
		}
		u.mu.Unlock()
	}
	return e.handlers, e.err
}

// build1 runs pprof's driver on head (minus base, when given, as
// pprof -diff_base) and returns its web UI's handlers by path.
func (u *pprofUIs) build1(head, base *profile.Profile) (map[string]http.Handler, error) {
	u.build.Lock()
	defer u.build.Unlock()
	args := []string{"-http=127.0.0.1:0", "-no_browser", "-symbolize=none", "-trim_path=" + pprofNoTrim}
	if base != nil {
		args = append(args, "-diff_base="+pprofBase)
	}
	args = append(args, pprofHead)
	var handlers map[string]http.Handler
	ui := &pprofQuietUI{}
	err := driver.PProf(&driver.Options{
		Flagset: newPprofFlags(args),
		Fetch:   pprofFetcher{pprofHead: head, pprofBase: base},
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
	return handlers, nil
}

// Source names of the fetched profiles; they never reach a file system or
// the network, pprofFetcher answers them.
const (
	pprofHead = "perfscope-head"
	pprofBase = "perfscope-base"
)

// pprofFetcher hands the driver profiles already in memory.
type pprofFetcher map[string]*profile.Profile

func (f pprofFetcher) Fetch(src string, _, _ time.Duration) (*profile.Profile, string, error) {
	p, ok := f[src]
	if !ok || p == nil {
		return nil, "", fmt.Errorf("no profile %q", src)
	}
	// The driver edits what it fetches; the source stays "" so it is
	// treated as local and never symbolized over the network.
	return p.Copy(), "", nil
}

// serve answers one request for the UI under prefix, such as
// /runs/ID/pprof/cpu/, whose handlers map paths like /flamegraph.
func serveUI(w http.ResponseWriter, r *http.Request, handlers map[string]http.Handler, prefix, view string) bool {
	if view == "" && !strings.HasSuffix(r.URL.Path, "/") {
		// pprof's links are relative ("./top"): the UI's root
		// must end in a slash.
		http.Redirect(w, r, prefix+"/", http.StatusMovedPermanently)
		return true
	}
	h, ok := handlers["/"+view]
	if !ok {
		return false
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + view
	h.ServeHTTP(w, r2)
	return true
}

// cleanForPprof returns a copy of p whose source file names are files
// inside sourceDir, or "": pprof's source view reads the files a profile
// names from the server's disk, searching the parents of its search path
// for relative names, and an uploaded profile could name any file. Each
// name becomes the absolute path of the file in sourceDir it maps to
// (profiles.ConfinedPath), which pprof opens as is (see pprofNoTrim).
func cleanForPprof(p *profile.Profile, sourceDir string) *profile.Profile {
	p = p.Copy()
	found := map[string]string{}
	for _, fn := range p.Function {
		local, ok := found[fn.Filename]
		if !ok {
			if strings.HasSuffix(fn.Filename, ".go") {
				local, _ = profiles.ConfinedPath(sourceDir, fn.Filename)
			}
			found[fn.Filename] = local
		}
		fn.Filename = local
	}
	return p
}

// pprofNoTrim is pprof's -trim_path: a prefix no path has. Without one,
// pprof guesses a prefix to cut from each file name, which could turn an
// absolute name relative again.
const pprofNoTrim = "/perfscope-no-trim-8f2c1e5a"

// forgetRun drops the views of a run.
func (u *pprofUIs) forgetRun(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for key, el := range u.entries {
		parts := strings.Split(key, "\x00")
		if slices.Contains(parts[1:len(parts)-1], id) {
			u.order.Remove(el)
			delete(u.entries, key)
		}
	}
}

// pprofQuietUI keeps the driver's messages out of the server's output,
// remembering the last error for the error message.
type pprofQuietUI struct {
	mu   sync.Mutex
	errs []string
}

func (u *pprofQuietUI) ReadLine(string) (string, error) { return "", errors.New("no terminal") }
func (u *pprofQuietUI) Print(...any)                    {}
func (u *pprofQuietUI) PrintErr(args ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.errs = append(u.errs, strings.TrimSpace(fmt.Sprint(args...)))
	if len(u.errs) > 5 {
		u.errs = u.errs[1:]
	}
}
func (u *pprofQuietUI) IsTerminal() bool                    { return false }
func (u *pprofQuietUI) WantBrowser() bool                   { return false }
func (u *pprofQuietUI) SetAutoComplete(func(string) string) {}

func (u *pprofQuietUI) lastErr() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.errs) == 0 {
		return ""
	}
	return ": " + u.errs[len(u.errs)-1]
}

// pprofFlags gives the driver a fixed command line.
type pprofFlags struct {
	fs    *flag.FlagSet
	args  []string
	extra []string
}

func newPprofFlags(args []string) *pprofFlags {
	fs := flag.NewFlagSet("pprof", flag.ContinueOnError)
	fs.SetOutput(discard{})
	return &pprofFlags{fs: fs, args: args}
}

func (f *pprofFlags) Bool(name string, def bool, usage string) *bool {
	return f.fs.Bool(name, def, usage)
}
func (f *pprofFlags) Int(name string, def int, usage string) *int { return f.fs.Int(name, def, usage) }
func (f *pprofFlags) Float64(name string, def float64, usage string) *float64 {
	return f.fs.Float64(name, def, usage)
}
func (f *pprofFlags) String(name, def, usage string) *string { return f.fs.String(name, def, usage) }

func (f *pprofFlags) StringList(name, def, usage string) *[]*string {
	l := &stringList{}
	if def != "" {
		l.vals = []*string{&def}
	}
	f.fs.Var(l, name, usage)
	return &l.vals
}

func (f *pprofFlags) ExtraUsage() string      { return strings.Join(f.extra, "\n") }
func (f *pprofFlags) AddExtraUsage(eu string) { f.extra = append(f.extra, eu) }
func (f *pprofFlags) Parse(usage func()) []string {
	f.fs.Usage = usage
	if err := f.fs.Parse(f.args); err != nil {
		usage()
		return nil
	}
	return f.fs.Args()
}

// stringList is a repeatable string flag.
type stringList struct{ vals []*string }

func (l *stringList) String() string { return "" }
func (l *stringList) Set(v string) error {
	l.vals = append(l.vals, &v)
	return nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
