package expose

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// labelsOf returns the profiler labels in ctx as "key=value" strings.
func labelsOf(ctx context.Context) map[string]string {
	m := map[string]string{}
	pprof.ForLabels(ctx, func(k, v string) bool { m[k] = v; return true })
	return m
}

// middlewares are the two ways of labelling requests, and whether each puts
// the labels in the request's context.
var middlewares = []struct {
	name      string
	wrap      func(http.Handler) http.Handler
	inContext bool
}{
	{"Middleware", Middleware, false},
	{"ContextMiddleware", ContextMiddleware, true},
}

// labelLine formats labels as a goroutine profile's "# labels:" line does.
func labelLine(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%q:%q", k, labels[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// checkLabels reports labels other than want, of a context or, as a
// goroutine profile's "# labels:" line, of a goroutine.
func checkLabels(t *testing.T, what string, got any, want map[string]string) {
	t.Helper()
	switch got := got.(type) {
	case string:
		if got != labelLine(want) {
			t.Errorf("%s: %s, want %s", what, got, labelLine(want))
		}
	case map[string]string:
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	default:
		t.Fatalf("%s: labels of type %T", what, got)
	}
}

// TestMiddlewareLabels checks the labels of the goroutine serving a request,
// of RouteContext, and, for ContextMiddleware, of the request's context.
func TestMiddlewareLabels(t *testing.T) {
	for _, mw := range middlewares {
		var goroutine string
		var routeCtx, reqCtx map[string]string
		ran := false
		record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ran = true
			goroutine = goroutineLabels(t, "TestMiddlewareLabels.func1")
			routeCtx, reqCtx = labelsOf(RouteContext(r)), labelsOf(r.Context())
		})

		mux := http.NewServeMux()
		mux.Handle("GET /users/{id}", record)
		mux.Handle("/static/", record)

		// A router other than ServeMux: the middleware wraps each route's
		// handler and reads Request.Pattern, which a ServeMux sets here too.
		inner := http.NewServeMux()
		inner.Handle("POST /items", mw.wrap(record))

		for _, tt := range []struct {
			name           string
			h              http.Handler
			method, target string
			want           map[string]string // nil: the handler must not run
		}{
			{"mux pattern", mw.wrap(mux), "GET", "/users/42", map[string]string{LabelRoute: "GET /users/{id}", LabelMethod: "GET"}},
			{"mux subtree", mw.wrap(mux), "HEAD", "/static/app.js", map[string]string{LabelRoute: "/static/", LabelMethod: "HEAD"}},
			{"odd method", mw.wrap(mux), "BREW", "/static/pot", map[string]string{LabelRoute: "/static/", LabelMethod: "_OTHER"}},
			{"no match", mw.wrap(mux), "GET", "/nothing", nil},
			{"per-route wrapper", inner, "POST", "/items", map[string]string{LabelRoute: "POST /items", LabelMethod: "POST"}},
		} {
			ran = false
			tt.h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tt.method, tt.target, nil))
			if tt.want == nil {
				if ran {
					t.Errorf("%s %s: handler ran, want a 404", mw.name, tt.name)
				}
				continue
			}
			if !ran {
				t.Errorf("%s %s: handler did not run", mw.name, tt.name)
				continue
			}
			checkLabels(t, mw.name+" "+tt.name+": goroutine labels", goroutine, tt.want)
			checkLabels(t, mw.name+" "+tt.name+": RouteContext labels", routeCtx, tt.want)
			want := tt.want
			if !mw.inContext {
				want = map[string]string{}
			}
			checkLabels(t, mw.name+" "+tt.name+": request context labels", reqCtx, want)
		}
	}
}

// TestMiddlewareKeepsHandlerLabels checks that a handler adding labels of its
// own keeps the middleware's, and has them back afterwards: behind
// Middleware starting from RouteContext, behind ContextMiddleware from the
// request's context.
func TestMiddlewareKeepsHandlerLabels(t *testing.T) {
	for _, mw := range middlewares {
		var inside map[string]string
		var after string
		mux := http.NewServeMux()
		mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			if !mw.inContext {
				ctx = RouteContext(r)
			}
			pprof.Do(ctx, pprof.Labels("tenant", "a"), func(ctx context.Context) { inside = labelsOf(ctx) })
			after = goroutineLabels(t, "TestMiddlewareKeepsHandlerLabels.func1")
		})
		mw.wrap(mux).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
		route := map[string]string{LabelMethod: "GET", LabelRoute: "GET /x"}
		want := map[string]string{LabelMethod: "GET", LabelRoute: "GET /x", "tenant": "a"}
		checkLabels(t, mw.name+": labels inside the handler's pprof.Do", inside, want)
		checkLabels(t, mw.name+": goroutine labels after the handler's pprof.Do", after, route)
	}
}

// TestMiddlewareMergesOuterLabels checks that labels a request's context
// already carries, from a middleware further out, are kept next to the
// route's.
func TestMiddlewareMergesOuterLabels(t *testing.T) {
	for _, mw := range middlewares {
		var goroutine string
		var routeCtx map[string]string
		mux := http.NewServeMux()
		mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {
			goroutine = goroutineLabels(t, "TestMiddlewareMergesOuterLabels.func1")
			routeCtx = labelsOf(RouteContext(r))
		})
		outer := func(w http.ResponseWriter, r *http.Request) {
			pprof.Do(r.Context(), pprof.Labels("tenant", "a"), func(ctx context.Context) {
				mw.wrap(mux).ServeHTTP(w, r.WithContext(ctx))
			})
		}
		outer(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
		want := map[string]string{LabelMethod: "GET", LabelRoute: "GET /x", "tenant": "a"}
		checkLabels(t, mw.name+": RouteContext labels", routeCtx, want)
		checkLabels(t, mw.name+": goroutine labels", goroutine, want)
	}
}

// TestMiddlewareKeepsContext checks that the labelled context a handler
// receives still carries the request context's values, deadline and
// cancellation.
func TestMiddlewareKeepsContext(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "v"), time.Hour)
	wantDeadline, _ := parent.Deadline()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if v := ctx.Value(key{}); v != "v" {
			t.Errorf("value %v, want v", v)
		}
		if d, ok := ctx.Deadline(); !ok || !d.Equal(wantDeadline) {
			t.Errorf("deadline %v %v, want %v", d, ok, wantDeadline)
		}
		child, stop := context.WithCancel(ctx)
		defer stop()
		cancel()
		select {
		case <-child.Done():
		case <-time.After(10 * time.Second):
			t.Error("cancelling the request's context did not reach a context derived in the handler")
		}
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("Err() = %v, want context.Canceled", ctx.Err())
		}
		if got := labelsOf(child); got[LabelRoute] != "GET /x" {
			t.Errorf("derived context has labels %v", got)
		}
	})
	ContextMiddleware(mux).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil).WithContext(parent))
}

// TestMiddlewareAllocations pins the per-request cost: for Middleware
// nothing; for ContextMiddleware the request copy WithContext makes,
// carrying its labelled context, and nothing else.
func TestMiddlewareAllocations(t *testing.T) {
	mux, r, w := emptyRoute()
	for _, tt := range []struct {
		name string
		h    http.Handler
		max  float64
	}{
		{"Middleware", Middleware(mux), 0},
		{"ContextMiddleware", ContextMiddleware(mux), 1},
	} {
		tt.h.ServeHTTP(w, r) // fills the label cache
		if n := testing.AllocsPerRun(100, func() { tt.h.ServeHTTP(w, r) }); n > tt.max {
			t.Errorf("%s: %v allocations per request, want at most %v", tt.name, n, tt.max)
		}
	}
}

// goroutineLabels returns the "# labels:" line of the goroutine profile
// record (debug=1) whose stack has a frame of function fn, or "" if that
// goroutine has no labels.
func goroutineLabels(t *testing.T, fn string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		t.Fatal(err)
	}
	for _, rec := range strings.Split(buf.String(), "\n\n") {
		if !strings.Contains(rec, "."+fn+"+") {
			continue
		}
		for _, line := range strings.Split(rec, "\n") {
			if l, ok := strings.CutPrefix(line, "# labels: "); ok {
				return l
			}
		}
		return ""
	}
	t.Fatalf("no goroutine in %s:\n%s", fn, buf.String())
	return ""
}

// TestGoroutineLabelsRemoved checks that both middlewares take the labels
// off the goroutine once the request is served.
func TestGoroutineLabelsRemoved(t *testing.T) {
	for _, mw := range middlewares {
		served := false
		mux := http.NewServeMux()
		mux.HandleFunc("GET /x/{id}", func(w http.ResponseWriter, r *http.Request) { served = true })
		mw.wrap(mux).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x/1", nil))
		if !served {
			t.Fatalf("%s: request not served", mw.name)
		}
		if after := goroutineLabels(t, "TestGoroutineLabelsRemoved"); after != "" {
			t.Errorf("%s: goroutine labels after serving %s, want none", mw.name, after)
		}
	}
}

// TestLabelsInCPUProfile takes a CPU profile through a Server while requests
// flow through the middleware, and finds the route in the profile's labels.
func TestLabelsInCPUProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a 1-second CPU profile")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /spin/{n}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, spin(200*time.Microsecond))
	})
	app := httptest.NewServer(Middleware(mux))
	defer app.Close()
	s := start(t, Options{})

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil && i < 100_000; i++ {
				req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/spin/%d", app.URL, i), nil)
				resp, err := app.Client().Do(req)
				if err != nil {
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	defer func() {
		stop()
		wg.Wait()
	}()
	// On a busy machine a second holds few samples: profiles are taken
	// until the process has used enough CPU time for the route to show,
	// however long that takes.
	const enough = 20 // samples, 200ms of CPU at the default rate
	var labelled, total int64
	for deadline := time.Now().Add(5 * time.Minute); total < enough && time.Now().Before(deadline); {
		l, n := routeSamples(t, s.URL()+"profile?seconds=1")
		labelled, total = labelled+l, total+n
	}
	if labelled == 0 {
		t.Fatalf("no sample of %d labelled %s=GET /spin/{n}", total, LabelRoute)
	}
	t.Logf("%d of %d samples carry the route label", labelled, total)
}

// routeSamples takes a CPU profile and returns the sample values labelled
// with the /spin route and in total.
func routeSamples(t *testing.T, url string) (labelled, total int64) {
	t.Helper()
	code, body := get(t, nil, url, "")
	if code != http.StatusOK {
		t.Fatalf("CPU profile: status %d: %s", code, body)
	}
	p, err := profile.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, smp := range p.Sample {
		total += smp.Value[0]
		if route := smp.Label[LabelRoute]; len(route) == 1 && route[0] == "GET /spin/{n}" {
			if m := smp.Label[LabelMethod]; len(m) != 1 || m[0] != "GET" {
				t.Errorf("sample with route label has %s=%v, want GET", LabelMethod, m)
			}
			labelled += smp.Value[0]
		}
	}
	return labelled, total
}

// spin burns CPU for about d and returns something the compiler cannot
// discard.
func spin(d time.Duration) uint64 {
	var x uint64 = 1
	for end := time.Now().Add(d); time.Now().Before(end); {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

// emptyRoute returns a mux with one route whose handler does nothing, a
// request for it and a recorder: what the middlewares alone cost.
func emptyRoute() (*http.ServeMux, *http.Request, *httptest.ResponseRecorder) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/leftpad/", func(http.ResponseWriter, *http.Request) {})
	return mux, httptest.NewRequest("GET", "/v1/leftpad/?str=a&len=5", nil), httptest.NewRecorder()
}

func BenchmarkMiddleware(b *testing.B) {
	mux, r, w := emptyRoute()
	for _, bb := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", mux},
		{"goroutine", Middleware(mux)},
		{"context", ContextMiddleware(mux)},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bb.h.ServeHTTP(w, r)
			}
		})
	}
}

// TestMiddlewareBehavesLikeMux checks that wrapping a ServeMux, with either
// middleware, changes nothing a handler or client can see: patterns, path
// values, redirects, 404s, 405s.
func TestMiddlewareBehavesLikeMux(t *testing.T) {
	mux := http.NewServeMux()
	show := func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "pattern=%q id=%q", r.Pattern, r.PathValue("id"))
	}
	mux.HandleFunc("GET /users/{id}", show)
	mux.HandleFunc("GET /exact", show)
	mux.HandleFunc("/tree/", show)
	mux.HandleFunc("POST /only-post", show)
	for _, tt := range []struct{ method, target string }{
		{"GET", "/users/42"},
		{"GET", "/exact"},
		{"GET", "/tree/a/b"},
		{"GET", "/tree"},
		{"GET", "/a/../exact"},
		{"GET", "/nothing"},
		{"GET", "/only-post"},
		{"OPTIONS", "*"},
	} {
		for _, mw := range middlewares {
			name, wrap := mw.name, mw.wrap
			want, got := httptest.NewRecorder(), httptest.NewRecorder()
			mux.ServeHTTP(want, httptest.NewRequest(tt.method, tt.target, nil))
			r := httptest.NewRequest(tt.method, tt.target, nil)
			wrap(mux).ServeHTTP(got, r)
			if got.Code != want.Code || got.Body.String() != want.Body.String() || fmt.Sprint(got.Header()) != fmt.Sprint(want.Header()) {
				t.Errorf("%s: %s %s: got %d %v %q, want %d %v %q", name, tt.method, tt.target,
					got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
			}
			if tt.target == "/exact" && r.Pattern != "GET /exact" {
				t.Errorf("%s: after serving %s, Request.Pattern = %q, want it set as the mux sets it", name, tt.target, r.Pattern)
			}
		}
	}
}

func TestLabelCacheBounded(t *testing.T) {
	c := newLabelCache()
	for i := range maxCachedRoutes + 10 {
		p := fmt.Sprintf("/redirect/%d/", i)
		ctx := c.get(p, "GET").ctx
		if got := labelsOf(ctx); got[LabelRoute] != p || got[LabelMethod] != "GET" {
			t.Fatalf("labels for %s: %v", p, got)
		}
	}
	if n := c.n.Load(); n != maxCachedRoutes {
		t.Errorf("cache holds %d routes, want at most %d", n, maxCachedRoutes)
	}
	if got := labelsOf(c.get("", "BREW").ctx); fmt.Sprint(got) != fmt.Sprint(map[string]string{LabelMethod: "_OTHER"}) {
		t.Errorf("no route, odd method: %v", got)
	}
}
