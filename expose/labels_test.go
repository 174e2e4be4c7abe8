package expose

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
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

func TestMiddlewareLabels(t *testing.T) {
	var got map[string]string
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = labelsOf(r.Context()) })

	mux := http.NewServeMux()
	mux.Handle("GET /users/{id}", record)
	mux.Handle("/static/", record)

	// A router other than ServeMux: the middleware wraps each route's
	// handler and reads Request.Pattern, which a ServeMux sets here too.
	inner := http.NewServeMux()
	inner.Handle("POST /items", Middleware(record))

	for _, tt := range []struct {
		name    string
		h       http.Handler
		method  string
		target  string
		want    map[string]string
		wantNil bool
	}{
		{"mux pattern", Middleware(mux), "GET", "/users/42", map[string]string{LabelRoute: "GET /users/{id}", LabelMethod: "GET"}, false},
		{"mux subtree", Middleware(mux), "HEAD", "/static/app.js", map[string]string{LabelRoute: "/static/", LabelMethod: "HEAD"}, false},
		{"odd method", Middleware(mux), "BREW", "/static/pot", map[string]string{LabelRoute: "/static/", LabelMethod: "_OTHER"}, false},
		{"no match", Middleware(mux), "GET", "/nothing", nil, true},
		{"per-route wrapper", inner, "POST", "/items", map[string]string{LabelRoute: "POST /items", LabelMethod: "POST"}, false},
	} {
		got = nil
		rec := httptest.NewRecorder()
		tt.h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
		if tt.wantNil {
			if got != nil {
				t.Errorf("%s: handler ran with labels %v, want a 404", tt.name, got)
			}
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: labels %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestMiddlewareKeepsHandlerLabels checks that a handler adding labels of its
// own keeps the middleware's.
func TestMiddlewareKeepsHandlerLabels(t *testing.T) {
	var got map[string]string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {
		pprof.Do(r.Context(), pprof.Labels("tenant", "a"), func(ctx context.Context) { got = labelsOf(ctx) })
	})
	Middleware(mux).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	want := map[string]string{LabelMethod: "GET", LabelRoute: "GET /x", "tenant": "a"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("labels %v, want %v", got, want)
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
	// On a busy machine a second may hold few samples; try a few times.
	var labelled, total int64
	for try := 0; try < 3 && labelled == 0; try++ {
		labelled, total = routeSamples(t, s.URL()+"profile?seconds=1")
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

func BenchmarkMiddleware(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/leftpad/", func(http.ResponseWriter, *http.Request) {})
	r := httptest.NewRequest("GET", "/v1/leftpad/?str=a&len=5", nil)
	w := httptest.NewRecorder()
	for _, bb := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", mux},
		{"labelled", Middleware(mux)},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bb.h.ServeHTTP(w, r)
			}
		})
	}
}

// TestMiddlewareBehavesLikeMux checks that wrapping a ServeMux changes
// nothing a handler or client can see: patterns, path values, redirects,
// 404s, 405s.
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
		want, got := httptest.NewRecorder(), httptest.NewRecorder()
		mux.ServeHTTP(want, httptest.NewRequest(tt.method, tt.target, nil))
		r := httptest.NewRequest(tt.method, tt.target, nil)
		Middleware(mux).ServeHTTP(got, r)
		if got.Code != want.Code || got.Body.String() != want.Body.String() || fmt.Sprint(got.Header()) != fmt.Sprint(want.Header()) {
			t.Errorf("%s %s: got %d %v %q, want %d %v %q", tt.method, tt.target,
				got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
		}
		if tt.target == "/exact" && r.Pattern != "GET /exact" {
			t.Errorf("after serving %s, Request.Pattern = %q, want it set as the mux sets it", tt.target, r.Pattern)
		}
	}
}

func TestLabelCacheBounded(t *testing.T) {
	c := newLabelCache()
	for i := range maxCachedRoutes + 10 {
		p := fmt.Sprintf("/redirect/%d/", i)
		ctx := pprof.WithLabels(context.Background(), c.get(p, "GET"))
		if got := labelsOf(ctx); got[LabelRoute] != p || got[LabelMethod] != "GET" {
			t.Fatalf("labels for %s: %v", p, got)
		}
	}
	if n := c.n.Load(); n != maxCachedRoutes {
		t.Errorf("cache holds %d routes, want at most %d", n, maxCachedRoutes)
	}
	if got := labelsOf(pprof.WithLabels(context.Background(), c.get("", "BREW"))); fmt.Sprint(got) != fmt.Sprint(map[string]string{LabelMethod: "_OTHER"}) {
		t.Errorf("no route, odd method: %v", got)
	}
}
