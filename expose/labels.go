package expose

import (
	"context"
	"net/http"
	"runtime/pprof"
	"strings"
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
// Labelling costs four small allocations per request, and for a ServeMux
// route with wildcards a second route lookup: a fraction of a microsecond.
func Middleware(h http.Handler) http.Handler {
	if mux, ok := h.(*http.ServeMux); ok {
		return muxLabeler{mux}
	}
	return patternLabeler{h}
}

// muxLabeler finds the route with the mux's own matching before serving.
type muxLabeler struct{ mux *http.ServeMux }

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
		serveLabelled(w, r, pattern, m.mux)
		return
	}
	// Without wildcards, calling the matched handler directly is all the
	// mux would do besides setting Request.Pattern, which we do, on r as
	// the mux does: middleware outside this one may read it afterwards.
	// That saves the second route lookup.
	r.Pattern = pattern
	serveLabelled(w, r, pattern, h)
}

// patternLabeler labels with Request.Pattern as a router left it.
type patternLabeler struct{ next http.Handler }

func (p patternLabeler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	serveLabelled(w, r, r.Pattern, p.next)
}

func serveLabelled(w http.ResponseWriter, r *http.Request, pattern string, next http.Handler) {
	var labels pprof.LabelSet
	if pattern == "" {
		labels = pprof.Labels(LabelMethod, methodLabel(r.Method))
	} else {
		// Keys in sorted order ("http.method" < "http.route") take
		// pprof.Labels' fast path.
		labels = pprof.Labels(LabelMethod, methodLabel(r.Method), LabelRoute, pattern)
	}
	pprof.Do(r.Context(), labels, func(ctx context.Context) {
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// methodLabel bounds the label's values to the registered methods: the
// method is chosen by the client, and every distinct label value costs
// memory in every profile.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}
