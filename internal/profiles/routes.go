package profiles

import (
	"cmp"
	"regexp"
	"slices"

	"github.com/google/pprof/profile"
)

// Profiler labels that perfscope's expose package puts on each request's
// goroutine, so CPU and goroutine profiles split by route.
const (
	RouteLabel  = "http.route"  // the matched pattern, e.g. "GET /v1/users/{id}"
	MethodLabel = "http.method" // the request method
)

// A RouteMatcher selects samples by their http.route label.
type RouteMatcher struct {
	pattern string
	re      *regexp.Regexp
}

// NewRouteMatcher matches routes equal to pattern, or matched by it as an
// unanchored regular expression, as pprof's -tagfocus does; a pattern that
// is not a valid expression ("GET /a/(") is matched literally.
func NewRouteMatcher(pattern string) *RouteMatcher {
	re, err := regexp.Compile(pattern)
	if err != nil {
		re = regexp.MustCompile(regexp.QuoteMeta(pattern))
	}
	return &RouteMatcher{pattern: pattern, re: re}
}

// Match reports whether a sample's route label matches.
func (m *RouteMatcher) Match(s *profile.Sample) bool {
	for _, r := range s.Label[RouteLabel] {
		if r == m.pattern || m.re.MatchString(r) {
			return true
		}
	}
	return false
}

// FilterSamples returns a shallow copy of p holding only the samples keep
// accepts; it shares locations and functions with p, which must not change
// while the copy is in use.
func FilterSamples(p *profile.Profile, keep func(*profile.Sample) bool) *profile.Profile {
	var samples []*profile.Sample
	for _, s := range p.Sample {
		if keep(s) {
			samples = append(samples, s)
		}
	}
	return withSamples(p, samples)
}

// withSamples is a shallow copy of p with other samples. (Copying the
// struct itself would copy the mutex pprof keeps for encoding.)
func withSamples(p *profile.Profile, samples []*profile.Sample) *profile.Profile {
	return &profile.Profile{
		SampleType:        p.SampleType,
		DefaultSampleType: p.DefaultSampleType,
		Sample:            samples,
		Mapping:           p.Mapping,
		Location:          p.Location,
		Function:          p.Function,
		Comments:          p.Comments,
		DocURL:            p.DocURL,
		DropFrames:        p.DropFrames,
		KeepFrames:        p.KeepFrames,
		TimeNanos:         p.TimeNanos,
		DurationNanos:     p.DurationNanos,
		PeriodType:        p.PeriodType,
		Period:            p.Period,
	}
}

// HasLabel reports whether any sample of p carries the label key.
func HasLabel(p *profile.Profile, key string) bool {
	for _, s := range p.Sample {
		if len(s.Label[key]) > 0 {
			return true
		}
	}
	return false
}

// A RouteShare is the part of a profile spent serving one route.
type RouteShare struct {
	// Route is the http.route label; "" gathers the samples without one
	// (background work, the server's own goroutines, unlabelled code).
	Route string `json:"route"`
	Value int64  `json:"value"`
	Unit  string `json:"unit"`
	// Share is Value as a fraction of the whole profile.
	Share float64 `json:"share"`
	// Top lists the user functions the route's samples are charged to,
	// most first; their shares are fractions of the route's Value.
	Top []Charge `json:"top"`
}

// A Charge is a user function charged with every sample whose innermost
// user frame it is: its own time plus that of the standard library,
// runtime and dependency code it calls. A handler whose time goes into
// fmt.Sprintf and string concatenation has little flat time but a large
// charge; unlike cum, the charge of a caller excludes user functions it
// calls, so charges add up without double counting.
type Charge struct {
	Function string  `json:"function"`
	File     string  `json:"file,omitempty"`
	Value    int64   `json:"value"`
	Share    float64 `json:"share"`
}

// Routes splits p by http.route label and ranks the routes by sampleType
// ("" for the default), with up to n charged user functions each (0: all).
// It returns nil when no sample carries a route label.
func Routes(p *profile.Profile, sampleType string, n int, c *Classifier) ([]RouteShare, error) {
	vi, err := SampleIndex(p, sampleType)
	if err != nil {
		return nil, err
	}
	if !HasLabel(p, RouteLabel) {
		return nil, nil
	}
	cs := NewClasses(c, p)
	total := SampleTotal(p, vi)
	type acc struct {
		RouteShare
		charges map[string]*Charge
	}
	routes := map[string]*acc{}
	for _, s := range p.Sample {
		v := s.Value[vi]
		r := ""
		if l := s.Label[RouteLabel]; len(l) > 0 {
			r = l[0]
		}
		a := routes[r]
		if a == nil {
			a = &acc{RouteShare: RouteShare{Route: r, Unit: unitOf(p, vi)}, charges: map[string]*Charge{}}
			routes[r] = a
		}
		a.Value += abs(v)
		fs := Frames(s)
		if i := UserFrame(fs, -1, cs.Frame); i >= 0 {
			f := fs[i]
			ch := a.charges[f.Name()]
			if ch == nil {
				ch = &Charge{Function: f.Name(), File: f.File()}
				a.charges[f.Name()] = ch
			}
			ch.Value += v
		}
	}
	out := make([]RouteShare, 0, len(routes))
	for _, a := range routes {
		a.Share = Share(a.Value, total)
		for _, ch := range a.charges {
			if ch.Value != 0 {
				ch.Share = Share(ch.Value, a.Value)
				a.Top = append(a.Top, *ch)
			}
		}
		slices.SortFunc(a.Top, func(x, y Charge) int {
			return cmp.Or(cmp.Compare(abs(y.Value), abs(x.Value)), cmp.Compare(x.Function, y.Function))
		})
		a.Top, _ = limit(a.Top, n)
		out = append(out, a.RouteShare)
	}
	slices.SortFunc(out, func(a, b RouteShare) int {
		return cmp.Or(cmp.Compare(b.Value, a.Value), cmp.Compare(a.Route, b.Route))
	})
	return out, nil
}
