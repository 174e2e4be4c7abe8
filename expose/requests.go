package expose

import (
	"cmp"
	"slices"
)

// OtherRoute is the RouteCount.Route of requests whose route was not counted
// apart: Middleware counts the first 1024 patterns it sees one by one, and
// the requests of any pattern after them together (a ServeMux reports the
// target of a redirect as the pattern, and that comes from the request).
const OtherRoute = "_OTHER"

// RequestsMetric is the name, in MetricsSnapshot.Metrics, of the requests
// served through Middleware and ContextMiddleware since the process
// started: a cumulative uint64, present once either middleware has been
// made. MetricsSnapshot.Requests splits it by route and method.
const RequestsMetric = "/expose/http/requests:requests"

// RequestCounts are the requests served through Middleware and
// ContextMiddleware since the process started, counted as each request
// begins. Its field names are stable.
type RequestCounts struct {
	// Total is the sum of Routes' counts.
	Total uint64 `json:"total"`
	// Routes holds the routes and methods that served a request, by route
	// then method.
	Routes []RouteCount `json:"routes"`
}

// A RouteCount is the requests of one route and method.
type RouteCount struct {
	// Route is the matched pattern, as the LabelRoute profiler label has
	// it; "" for requests that matched none (404s), OtherRoute for routes
	// beyond the 1024 counted apart.
	Route string `json:"route"`
	// Method is the method, as the LabelMethod label has it.
	Method string `json:"method"`
	Count  uint64 `json:"count"`
}

// requestCounts reads c's counters; nil before any middleware was made,
// when nothing is counted.
func (c *labelCache) requestCounts() *RequestCounts {
	if !c.counting.Load() {
		return nil
	}
	rc := &RequestCounts{Routes: []RouteCount{}}
	add := func(route string, i int, n uint64) {
		if n > 0 {
			rc.Routes = append(rc.Routes, RouteCount{Route: route, Method: c.methods[i], Count: n})
			rc.Total += n
		}
	}
	for i, l := range c.noRoute {
		add("", i, l.served.Load())
	}
	c.routes.Range(func(k, v any) bool {
		for i, l := range v.(*[numMethods]*routeLabels) {
			add(k.(string), i, l.served.Load())
		}
		return true
	})
	for i := range c.overflow {
		add(OtherRoute, i, c.overflow[i].Load())
	}
	slices.SortFunc(rc.Routes, func(a, b RouteCount) int {
		return cmp.Or(cmp.Compare(a.Route, b.Route), cmp.Compare(a.Method, b.Method))
	})
	return rc
}
