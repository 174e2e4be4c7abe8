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

// Middleware returns h with each request's goroutine labelled (LabelRoute,
// LabelMethod) while h serves it, so profiles taken meanwhile can be split by
// route. The labels are also in the request's context, so a handler that
// adds labels of its own with pprof.Do(r.Context(), ...) keeps them, and
// goroutines it starts inherit them.
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
// Labelling costs three small allocations per request (the labelled context
// and the request carrying it), and for a ServeMux route with wildcards a
// second route lookup: a few hundred nanoseconds.
func Middleware(h http.Handler) http.Handler {
	if mux, ok := h.(*http.ServeMux); ok {
		return muxLabeler{mux, newLabelCache()}
	}
	return patternLabeler{h, newLabelCache()}
}

// muxLabeler finds the route with the mux's own matching before serving.
type muxLabeler struct {
	mux    *http.ServeMux
	labels *labelCache
}

func (m muxLabeler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.RequestURI == "*" {
		m.mux.ServeHTTP(w, r) // the mux answers "OPTIONS *" itself
		return
	}
	// For a request the mux answers with a redirect (a missing trailing
	// slash, an unclean path) the pattern is the redirect's target path.
	h, pattern := m.mux.Handler(r)
	if strings.IndexByte(pattern, '{') >= 0 {
		// Only the mux can give the handler its wildcards' values
		// (Request.PathValue), so it routes the request a second time.
		serveLabelled(w, r, m.labels.get(pattern, r.Method), m.mux)
		return
	}
	// Without wildcards, calling the matched handler directly is all the
	// mux would do besides setting Request.Pattern, which we do, on r as
	// the mux does: middleware outside this one may read it afterwards.
	// That saves the second route lookup.
	r.Pattern = pattern
	serveLabelled(w, r, m.labels.get(pattern, r.Method), h)
}

// patternLabeler labels with Request.Pattern as a router left it.
type patternLabeler struct {
	next   http.Handler
	labels *labelCache
}

func (p patternLabeler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	serveLabelled(w, r, p.labels.get(r.Pattern, r.Method), p.next)
}

func serveLabelled(w http.ResponseWriter, r *http.Request, labels pprof.LabelSet, next http.Handler) {
	pprof.Do(r.Context(), labels, func(ctx context.Context) {
		next.ServeHTTP(w, r.WithContext(ctx))
	})
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

// labelCache keeps one LabelSet per route and method: building a LabelSet
// allocates, and a request would otherwise build the same one every time.
type labelCache struct {
	methods [numMethods]string
	noRoute [numMethods]pprof.LabelSet
	routes  sync.Map // pattern → *[numMethods]pprof.LabelSet
	n       atomic.Int32
}

func newLabelCache() *labelCache {
	c := &labelCache{methods: methodLabels()}
	for i, m := range c.methods {
		c.noRoute[i] = pprof.Labels(LabelMethod, m)
	}
	return c
}

// get returns the labels for a request with this pattern and method.
func (c *labelCache) get(pattern, method string) pprof.LabelSet {
	i := methodIndex(method)
	if pattern == "" {
		return c.noRoute[i]
	}
	if sets, ok := c.routes.Load(pattern); ok {
		return sets.(*[numMethods]pprof.LabelSet)[i]
	}
	// Keys in sorted order ("http.method" < "http.route") take
	// pprof.Labels' fast path.
	if c.n.Load() >= maxCachedRoutes {
		return pprof.Labels(LabelMethod, c.methods[i], LabelRoute, pattern)
	}
	sets := new([numMethods]pprof.LabelSet)
	for j, m := range c.methods {
		sets[j] = pprof.Labels(LabelMethod, m, LabelRoute, pattern)
	}
	if _, loaded := c.routes.LoadOrStore(pattern, sets); !loaded {
		c.n.Add(1)
	}
	return sets[i]
}
