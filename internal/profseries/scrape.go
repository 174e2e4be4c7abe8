// Package profseries is the compact form of profiles scraped from live
// services over time, and the computations over it: the profiles of one
// target and profile type form a series; symbols and stacks are interned
// once; each scrape's samples are a compressed columnar block. It also
// defines what the scraper hands the store (Scrape) and how series are
// named and selected (Labels, Selector). Persistence is the store's
// (store.ProfileSeries); collection is the scraper's (package scrape).
package profseries

import (
	"slices"
	"sort"
	"time"

	"github.com/google/pprof/profile"
)

// A Label is one name and value of a target's label set. Names and values
// are kept as written: spaces, dashes and any unicode included.
type Label struct {
	Name, Value string
}

// Labels is a target's label set, sorted by name, names unique.
type Labels []Label

// NewLabels returns the label set of m, sorted by name.
func NewLabels(m map[string]string) Labels {
	ls := make(Labels, 0, len(m))
	for n, v := range m {
		ls = append(ls, Label{Name: n, Value: v})
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
	return ls
}

// Get returns the value of the label named n, "" when there is none.
func (ls Labels) Get(n string) string {
	for _, l := range ls {
		if l.Name == n {
			return l.Value
		}
	}
	return ""
}

// Map returns the label set as a map.
func (ls Labels) Map() map[string]string {
	m := make(map[string]string, len(ls))
	for _, l := range ls {
		m[l.Name] = l.Value
	}
	return m
}

// String writes the label set as the selector that matches it exactly
// (see Exact): {a="1", b="x y"}.
func (ls Labels) String() string { return Exact(ls).String() }

// The profile types a scraper collects, as named in configuration, queries
// and the store.
const (
	CPU           = "cpu"
	Allocs        = "allocs"
	Heap          = "heap"
	Goroutine     = "goroutine"
	Mutex         = "mutex"
	Block         = "block"
	GoroutineLeak = "goroutineleak"
)

// Types lists every profile type in the order they are shown.
var Types = []string{CPU, Allocs, Heap, Goroutine, Mutex, Block, GoroutineLeak}

// A Process identifies the process a scrape came from, so that scrapes of
// two binaries, or of one binary before and after a restart, are never
// merged or subtracted silently. Fields the target does not reveal are
// zero.
type Process struct {
	// BuildID is the main binary's build id, from the profile's first
	// mapping.
	BuildID string `json:"build_id"`
	// Generation counts the restarts the scraper has seen of this target:
	// it grows by one each time a cumulative profile's counters go back
	// or the build id changes.
	Generation int `json:"generation"`
}

// A TargetProcess is one process of one target: what a merged range
// records of where its samples came from.
type TargetProcess struct {
	Target  Labels  `json:"target"`
	Process Process `json:"process"`
}

// Restarted returns the targets that ps holds more than one process of
// (a restart or a deploy within the range), each with its processes, in
// the order of ps (a merged window's are by target, then generation).
func Restarted(ps []TargetProcess) [][]TargetProcess {
	var out [][]TargetProcess
	for i, p := range ps {
		if slices.ContainsFunc(ps[:i], func(q TargetProcess) bool { return slices.Equal(q.Target, p.Target) }) {
			continue
		}
		var same []TargetProcess
		for _, q := range ps[i:] {
			if slices.Equal(q.Target, p.Target) {
				same = append(same, q)
			}
		}
		if len(same) > 1 {
			out = append(out, same)
		}
	}
	return out
}

// A Scrape is one profile of one target over one window, as collected.
type Scrape struct {
	// Target names the target: its label set includes job and instance.
	Target Labels
	// Type is one of the profile types above.
	Type string
	// Start and End bound the window the samples cover: the CPU profile's
	// window, or the delta's for allocs, heap, mutex and block. For a
	// snapshot (goroutine, and heap's in-use values) both are the instant
	// it was taken.
	Start, End time.Time
	// Process is where the profile came from.
	Process Process
	// Profile holds the samples: for cumulative types, already the delta
	// over [Start, End], never negative.
	Profile *profile.Profile
	// RawBytes is the size of the pprof bodies as received, for
	// accounting what storing them compactly saves.
	RawBytes int64
	// Requests are the requests the target served over the window, where
	// it counts them (perfscope's expose middleware does): the scraper
	// sets them on CPU scrapes. Nil means unknown, never none.
	Requests *Requests
}

// Requests are the requests a target served over one scrape's window, as
// its middleware counted them, per route and method.
type Requests struct {
	// Total is the sum of Routes' counts.
	Total  int64           `json:"total"`
	Routes []RouteRequests `json:"routes"`
	// Span is the time between the two reads of the counters that
	// Total is the difference of. The reads follow the ends of
	// consecutive windows, so Span is the window's length give or take
	// the moments the requests take; rates (Total/Span) compare with the
	// window's rates without that error.
	Span time.Duration `json:"span_ns"`
}

// RouteRequests are the requests of one route and method: Route as the
// http.route profiler label has it ("" for requests that matched none).
type RouteRequests struct {
	Route  string `json:"route"`
	Method string `json:"method"`
	Count  int64  `json:"count"`
}

// ByRoute sums the counts of each route over its methods, as CPU profiles
// split by route (profiles.Routes); requests of no route are left out.
func (r *Requests) ByRoute() map[string]int64 {
	out := map[string]int64{}
	for _, rr := range r.Routes {
		if rr.Route != "" {
			out[rr.Route] += rr.Count
		}
	}
	return out
}
