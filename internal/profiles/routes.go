package profiles

import (
	"cmp"
	"fmt"
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
	Route string  `json:"route"`
	Value int64   `json:"value"`
	Share float64 `json:"share"` // of the whole profile
	// Top lists the route's hottest user functions by flat value; their
	// shares are fractions of the route's Value.
	Top []Row `json:"top"`
}

// Routes splits p by http.route label and ranks the routes by sampleType
// ("" for the default), with up to n top user functions each (0: all).
// It returns nil when no sample carries a route label.
func Routes(p *profile.Profile, sampleType string, n int, c *Classifier) ([]RouteShare, error) {
	vi, err := sampleIndex(p, sampleType)
	if err != nil {
		return nil, err
	}
	if !HasLabel(p, RouteLabel) {
		return nil, nil
	}
	if c == nil {
		c = NewClassifier("", p)
	}
	total := sampleTotal(p, vi)
	byRoute := map[string][]*profile.Sample{}
	for _, s := range p.Sample {
		r := ""
		if v := s.Label[RouteLabel]; len(v) > 0 {
			r = v[0]
		}
		byRoute[r] = append(byRoute[r], s)
	}
	var out []RouteShare
	for r, samples := range byRoute {
		ft, err := Functions(withSamples(p, samples), sampleType, c)
		if err != nil {
			return nil, fmt.Errorf("route %q: %w", r, err)
		}
		rs := RouteShare{Route: r, Value: ft.Total, Share: share(ft.Total, total)}
		top := ft.Top(ByFlat, n, true)
		for _, row := range top.Rows {
			if row.Class == User && row.Folded == 0 {
				rs.Top = append(rs.Top, row)
			}
		}
		out = append(out, rs)
	}
	slices.SortFunc(out, func(a, b RouteShare) int {
		if c := cmp.Compare(b.Value, a.Value); c != 0 {
			return c
		}
		return cmp.Compare(a.Route, b.Route)
	})
	return out, nil
}
