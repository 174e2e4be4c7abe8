package expose

import (
	"context"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
)

// Profiler label keys set by Middleware. perfscope's reports split CPU and
// goroutine profiles by exactly these keys.
const (
	// LabelRoute is the key of the matched route pattern, as in
	// http.Request.Pattern: "GET /v1/users/{id}", "/static/". Requests that
	// matched no pattern have no route label.
	LabelRoute = "http.route"
	// LabelMethod is the key of the request method. Methods other than the
	// eight of RFC 9110 and PATCH are labelled "_OTHER", so a client cannot
	// invent label values.
	LabelMethod = "http.method"
)

// Middleware returns h with the goroutine serving each request labelled
// (LabelRoute, LabelMethod) while h serves it, so CPU and goroutine profiles
// taken meanwhile can be split by route. Goroutines the handler starts
// inherit the labels. Middleware allocates nothing per request once a route
// has been seen: the label sets are built once per route and method.
//
// The labels are on the goroutine, not in the request's context, because
// putting them there takes a copy of the request (only WithContext sets a
// request's context), and that copy, with the garbage collection it causes,
// is most of what labelling would cost (see Overhead in the package
// documentation). So pprof.Label(r.Context(), LabelRoute) finds nothing, and
// a handler that adds labels of its own must start from RouteContext(r):
//
//	pprof.Do(expose.RouteContext(r), pprof.Labels("tenant", t), func(ctx context.Context) { ... })
//
// pprof.Do(r.Context(), ...) would run its function without the route labels
// and, when it returns, leave the goroutine with the labels of r.Context():
// none, for the rest of the request. Where handlers or the libraries they
// call label through the request's context they are given, use
// ContextMiddleware instead.
//
// The route is known only once a router has matched the request, which is
// after a middleware wrapping the router has run. Middleware handles that in
// two ways:
//
//   - If h is an *http.ServeMux, Middleware asks it which pattern matches
//     (ServeMux.Handler) before letting it serve the request. Wrap the whole
//     mux: Middleware(mux).
//   - For any other handler, Middleware reads Request.Pattern when the
//     request reaches it. With a router that sets Request.Pattern before
//     calling a route's handler (http.ServeMux does; other routers may),
//     wrap each route's handler rather than the router:
//     router.Handle(p, Middleware(h)). Wrapping such a router from outside
//     labels the method only.
//
// Labels that the request's context already carries, from a pprof.Do
// further out, are kept next to the route's.
//
// Middleware also counts the requests it serves, per route and method, with
// one atomic addition and no allocation; /debug/metrics serves the counts
// (see RequestCounts), so that a scraper can divide a profile's CPU time by
// the requests served meanwhile.
func Middleware(h http.Handler) http.Handler {
	return labeller(h, false)
}

// ContextMiddleware is Middleware that also puts the labels in the request's
// context, so handlers, and libraries they pass the context to, can read the
// labels and add their own with pprof.Do(r.Context(), ...).
//
// It costs one allocation per request of 352 bytes: the copy of the Request
// that carries the labelled context, allocated together with that context.
// On the leftpad example, whose requests take 35µs of CPU, that and the
// garbage collection it causes are about 0.4µs, 1.1% of a request, on top of
// what Middleware costs.
func ContextMiddleware(h http.Handler) http.Handler {
	return labeller(h, true)
}

// RouteContext returns r's context with the route labels Middleware gives
// the goroutine serving r, for a handler behind Middleware that adds labels
// of its own:
//
//	pprof.Do(expose.RouteContext(r), pprof.Labels("tenant", t), f)
//
// runs f with the route's labels and the tenant's, and afterwards restores
// the route's. It allocates one small context per call. Behind
// ContextMiddleware r.Context() already holds the labels, and RouteContext
// returns it.
func RouteContext(r *http.Request) context.Context {
	parent := r.Context()
	labels := routes.get(r.Pattern, r.Method)
	if !hasLabels(parent) {
		return &labelledContext{Context: parent, labels: labels.ctx}
	}
	if _, ok := pprof.Label(parent, LabelMethod); ok {
		return parent // labelled already, by ContextMiddleware or RouteContext
	}
	return pprof.WithLabels(parent, labels.set)
}

func labeller(h http.Handler, inContext bool) http.Handler {
	routes.counting.Store(true)
	if mux, ok := h.(*http.ServeMux); ok {
		return muxLabeler{mux, routes, inContext}
	}
	return patternLabeler{h, routes, inContext}
}

// routes holds the labels of every route any middleware has seen, and
// RouteContext finds them there.
var routes = newLabelCache()

// muxLabeler finds the route with the mux's own matching before serving.
type muxLabeler struct {
	mux       *http.ServeMux
	labels    *labelCache
	inContext bool // label the request's context too
}

func (m muxLabeler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.RequestURI == "*" {
		m.labels.noRoute[methodIndex(r.Method)].served.Add(1)
		m.mux.ServeHTTP(w, r) // the mux answers "OPTIONS *" itself
		return
	}
	// For a request the mux answers with a redirect (a missing trailing
	// slash, an unclean path) the pattern is the redirect's target path.
	h, pattern := m.mux.Handler(r)
	if strings.IndexByte(pattern, '{') >= 0 {
		// Only the mux can give the handler its wildcards' values
		// (Request.PathValue), so it routes the request a second time.
		serveLabelled(w, r, m.labels.get(pattern, r.Method), m.inContext, m.mux)
		return
	}
	// Without wildcards, calling the matched handler directly is all the
	// mux would do besides setting Request.Pattern, which we do, on r as
	// the mux does: middleware outside this one may read it afterwards.
	// That saves the second route lookup.
	r.Pattern = pattern
	serveLabelled(w, r, m.labels.get(pattern, r.Method), m.inContext, h)
}

// patternLabeler labels with Request.Pattern as a router left it.
type patternLabeler struct {
	next      http.Handler
	labels    *labelCache
	inContext bool
}

func (p patternLabeler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	serveLabelled(w, r, p.labels.get(r.Pattern, r.Method), p.inContext, p.next)
}

// serveLabelled serves r with next, with the goroutine and, if inContext,
// r's context labelled. It does what pprof.Do does, but with labels
// prepared once per route: the goroutine gets the shared labelled context of
// the route, and the request a context that takes its labels from there and
// everything else from r's context.
func serveLabelled(w http.ResponseWriter, r *http.Request, labels *routeLabels, inContext bool, next http.Handler) {
	labels.served.Add(1)
	parent := r.Context()
	if hasLabels(parent) {
		// Labels from further out are merged with ours, which needs a
		// label set of its own for this request.
		pprof.Do(parent, labels.set, func(ctx context.Context) {
			if inContext {
				r = r.WithContext(ctx)
			}
			next.ServeHTTP(w, r)
		})
		return
	}
	// Afterwards the goroutine gets the labels of r's context, which has
	// none, as pprof.Do would set them; Background says so without
	// searching r's context again.
	defer pprof.SetGoroutineLabels(context.Background())
	pprof.SetGoroutineLabels(labels.ctx)
	if !inContext {
		next.ServeHTTP(w, r)
		return
	}
	// The request and its context in one allocation. WithContext is
	// inlined and its copy, copied on at once, stays on the stack.
	lr := &labelledRequest{ctx: labelledContext{Context: parent, labels: labels.ctx}}
	lr.req = *r.WithContext(&lr.ctx)
	next.ServeHTTP(w, &lr.req)
}

// hasLabels reports whether ctx carries profiler labels.
func hasLabels(ctx context.Context) bool {
	found := false
	pprof.ForLabels(ctx, func(string, string) bool {
		found = true
		return false
	})
	return found
}

// A labelledRequest is the request a handler behind ContextMiddleware receives,
// allocated together with its context.
type labelledRequest struct {
	req http.Request
	ctx labelledContext
}

// labelledContext is a request's context with a route's profiler labels:
// the labels come from a context made once per route (pprof keeps them
// under a key of its own), every other value, the deadline and cancellation
// from the request's context.
type labelledContext struct {
	context.Context
	labels context.Context
}

func (c *labelledContext) Value(key any) any {
	if v := c.labels.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// numMethods is the number of LabelMethod values: the methods listed in
// methodIndex and "_OTHER".
const numMethods = 10

// methodIndex returns the index of m's label value in methodLabels. The
// method is chosen by the client, and every distinct label value costs
// memory in every profile, so the values are bounded.
func methodIndex(m string) int {
	switch m {
	case http.MethodGet:
		return 0
	case http.MethodHead:
		return 1
	case http.MethodPost:
		return 2
	case http.MethodPut:
		return 3
	case http.MethodPatch:
		return 4
	case http.MethodDelete:
		return 5
	case http.MethodConnect:
		return 6
	case http.MethodOptions:
		return 7
	case http.MethodTrace:
		return 8
	}
	return 9
}

// methodLabels returns the LabelMethod values by methodIndex.
func methodLabels() [numMethods]string {
	return [numMethods]string{
		http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace, "_OTHER",
	}
}

// maxCachedRoutes bounds labelCache: patterns come from the router's
// registered routes, but a ServeMux reports the target path of a redirect
// as the pattern, and that path comes from the request.
const maxCachedRoutes = 1024

// routeLabels are the labels of one route and method, as a set (to merge
// with other labels) and as a context holding only them (to label a
// goroutine with, and to look them up in), and the counter of the
// requests served with them.
type routeLabels struct {
	set    pprof.LabelSet
	ctx    context.Context
	served *atomic.Uint64
}

func newRouteLabels(set pprof.LabelSet, served *atomic.Uint64) *routeLabels {
	if served == nil {
		served = new(atomic.Uint64)
	}
	return &routeLabels{set: set, ctx: pprof.WithLabels(context.Background(), set), served: served}
}

// labelCache keeps the labels per route and method: building them
// allocates, and a request would otherwise build the same ones every time.
// With them it keeps the count of requests served per route and method.
type labelCache struct {
	methods [numMethods]string
	noRoute [numMethods]*routeLabels
	routes  sync.Map // pattern → *[numMethods]*routeLabels
	n       atomic.Int32
	// overflow counts, per method, the requests of routes beyond
	// maxCachedRoutes.
	overflow [numMethods]atomic.Uint64
	// counting is set once a middleware has been made: before, no
	// request is counted and the counts are not served.
	counting atomic.Bool
}

func newLabelCache() *labelCache {
	c := &labelCache{methods: methodLabels()}
	for i, m := range c.methods {
		c.noRoute[i] = newRouteLabels(pprof.Labels(LabelMethod, m), nil)
	}
	return c
}

// get returns the labels for a request with this pattern and method.
func (c *labelCache) get(pattern, method string) *routeLabels {
	i := methodIndex(method)
	if pattern == "" {
		return c.noRoute[i]
	}
	if sets, ok := c.routes.Load(pattern); ok {
		return sets.(*[numMethods]*routeLabels)[i]
	}
	// Keys in sorted order ("http.method" < "http.route") take
	// pprof.Labels' fast path.
	if c.n.Load() >= maxCachedRoutes {
		return newRouteLabels(pprof.Labels(LabelMethod, c.methods[i], LabelRoute, pattern), &c.overflow[i])
	}
	sets := new([numMethods]*routeLabels)
	for j, m := range c.methods {
		sets[j] = newRouteLabels(pprof.Labels(LabelMethod, m, LabelRoute, pattern), nil)
	}
	actual, loaded := c.routes.LoadOrStore(pattern, sets)
	if !loaded {
		c.n.Add(1)
	}
	// Another request may have stored the route's labels first: theirs
	// hold the route's counters.
	return actual.(*[numMethods]*routeLabels)[i]
}
