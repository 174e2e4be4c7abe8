package profseries

import (
	"cmp"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/perfscope/perfscope/internal/profiles"
)

// A DeployPerRequest is a deploy judged by CPU per request: in all, and
// per route where the profiles carry route labels (expose's middleware
// puts them there). Values are CPU seconds per request, the median of the
// scrapes' ratios on each side.
type DeployPerRequest struct {
	// BeforeRequests and AfterRequests are the requests counted over the
	// scrapes compared on each side.
	BeforeRequests int64 `json:"before_requests"`
	AfterRequests  int64 `json:"after_requests"`
	// Total is the whole profile's CPU per request: the garbage
	// collector's and the server's own work included, which requests
	// cause.
	Total PerRequestChange `json:"total"`
	// Routes are the routes compared: each route's CPU is that of the
	// samples labelled with it (the goroutines serving it, not the
	// garbage collection it causes), divided by its requests. Significant
	// ones first, then by the size of the change.
	Routes []PerRequestChange `json:"routes"`
	// Significant counts the significant changes, Total's included.
	Significant int `json:"significant"`
}

// A PerRequestChange is the CPU per request of one route, or of all,
// before and after a deploy.
type PerRequestChange struct {
	// Route is the route's pattern; "" for Total.
	Route string `json:"route"`
	// Before and After are the medians of the scrapes' CPU seconds per
	// request; Change is After/Before − 1; P the Mann–Whitney U test's
	// p-value over the scrapes' ratios.
	Before float64 `json:"before_seconds"`
	After  float64 `json:"after_seconds"`
	Change float64 `json:"change"`
	P      float64 `json:"p"`
	// Significant is true when P is below the report's alpha (divided
	// by the changes tested) and Change at least its
	// min_per_request_change either way.
	Significant bool `json:"significant"`
	// BeforeScrapes and AfterScrapes count the scrapes whose ratios were
	// compared: those in which the route served requests.
	BeforeScrapes int `json:"before_scrapes"`
	AfterScrapes  int `json:"after_scrapes"`
}

// perRequestBasis is Deploy.Basis for ComparedPerRequest.
const perRequestBasis = "CPU seconds per request in each scrape, in all and per route, the requests counted by the target's expose middleware; and where the profile moved, each function's cum share (itself and what it calls); of " + deploySides

// sharesBasis is Deploy.Basis for ComparedShares, with why requests were
// not compared.
func sharesBasis(o DeployOptions, why string) string {
	b := "each function's cum share (itself and what it calls) of " + o.Type + " per scrape, of " + deploySides
	if why != "" {
		b += " (CPU per request is not known: " + why + ")"
	}
	return b
}

// withCounts is the windows of ws with requests counted.
func withCounts(ws []Window) []Window {
	var out []Window
	for _, w := range ws {
		if w.Requests != nil && w.Requests.Total > 0 {
			out = append(out, w)
		}
	}
	return out
}

// perRequestMissing says why the deploy cannot be judged by CPU per
// request, "" when it can: CPU profiles, and on each side at least
// MinScrapes scrapes that counted requests.
func perRequestMissing(before, after []Window, o DeployOptions) string {
	if o.Type != CPU {
		return "only CPU profiles are compared per request"
	}
	b, a := len(withCounts(before)), len(withCounts(after))
	switch {
	case b == 0 && a == 0:
		return "the scrapes record no request counts (serve the application behind expose.Middleware)"
	case a == 0:
		return "no scrape after the deploy counted requests"
	case b == 0:
		return "no scrape before the deploy counted requests"
	case b < o.MinScrapes && a < o.MinScrapes:
		return "too few scrapes counted requests on both sides (fewer than min_scrapes)"
	case a < o.MinScrapes:
		return "too few scrapes after the deploy counted requests (fewer than min_scrapes)"
	case b < o.MinScrapes:
		return "too few scrapes before the deploy counted requests (fewer than min_scrapes)"
	}
	return ""
}

// perRequest is one side's CPU seconds per request, per scrape that
// counted requests: in all ("" route) and per route, from the scrape's
// profile (its stacks resolved in sy). Each is a ratio of rates, CPU
// seconds per second of the window over requests per second of the
// counts' span, as the two differ by the moments the scraper's requests
// take.
func perRequest(ws []Window, sy *Symbols) (map[string][]float64, int64, error) {
	out := map[string][]float64{}
	var requests int64
	for _, w := range ws {
		if w.Requests == nil || w.Requests.Total <= 0 {
			continue
		}
		p, err := sy.Profile(w)
		if err != nil {
			return nil, 0, err
		}
		vi, err := profiles.SampleIndex(p, profiles.SampleCPU)
		if err != nil {
			return nil, 0, err
		}
		requests += w.Requests.Total
		// scale turns requests counted over the span into requests
		// over the window.
		scale := 1.0
		if w.Requests.Span > 0 && w.Duration > 0 {
			scale = float64(w.Duration) / float64(w.Requests.Span)
		}
		out[""] = append(out[""], seconds(profiles.SampleTotal(p, vi))/(scale*float64(w.Requests.Total)))
		routes, err := profiles.Routes(p, profiles.SampleCPU, 1, nil)
		if err != nil {
			return nil, 0, err
		}
		byRoute := w.Requests.ByRoute()
		for _, r := range routes {
			if n := byRoute[r.Route]; r.Route != "" && n > 0 {
				out[r.Route] = append(out[r.Route], seconds(r.Value)/(scale*float64(n)))
			}
		}
	}
	return out, requests, nil
}

// seconds converts a CPU profile's nanoseconds.
func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// comparePerRequest compares the CPU per request of the scrapes before
// and after (their stacks resolved in sy): in all, and for each route
// whose requests were counted in at least o.MinScrapes scrapes on each
// side. Each is a Mann–Whitney U test at o.Alpha divided by the tests
// made.
func comparePerRequest(before, after []Window, sy *Symbols, o DeployOptions) (*DeployPerRequest, error) {
	b, bn, err := perRequest(before, sy)
	if err != nil {
		return nil, err
	}
	a, an, err := perRequest(after, sy)
	if err != nil {
		return nil, err
	}
	var routes []string
	for r, vs := range b {
		if r != "" && len(vs) >= o.MinScrapes && len(a[r]) >= o.MinScrapes {
			routes = append(routes, r)
		}
	}
	slices.Sort(routes)
	alpha := o.Alpha / float64(1+len(routes))
	change := func(route string) PerRequestChange {
		c := PerRequestChange{Route: route, BeforeScrapes: len(b[route]), AfterScrapes: len(a[route]),
			Before: median(slices.Clone(b[route])), After: median(slices.Clone(a[route]))}
		c.P = mannWhitney(b[route], a[route], alpha)
		if c.Before > 0 {
			c.Change = c.After/c.Before - 1
		}
		c.Significant = c.P < alpha && math.Abs(c.Change) >= o.MinPerRequestChange
		return c
	}
	d := &DeployPerRequest{BeforeRequests: bn, AfterRequests: an, Total: change(""), Routes: []PerRequestChange{}}
	for _, r := range routes {
		d.Routes = append(d.Routes, change(r))
	}
	slices.SortStableFunc(d.Routes, func(x, y PerRequestChange) int {
		if x.Significant != y.Significant {
			if x.Significant {
				return -1
			}
			return 1
		}
		return cmp.Compare(math.Abs(y.Change), math.Abs(x.Change))
	})
	for _, c := range append([]PerRequestChange{d.Total}, d.Routes...) {
		if c.Significant {
			d.Significant++
		}
	}
	return d, nil
}

// mannWhitney is the p-value of the Mann–Whitney U test of before
// against after, as benchstat computes it, at alpha.
func mannWhitney(before, after []float64, alpha float64) float64 {
	th := benchmath.DefaultThresholds
	th.CompareAlpha = alpha
	return benchmath.AssumeNothing.Compare(benchmath.NewSample(before, &th), benchmath.NewSample(after, &th)).P
}
