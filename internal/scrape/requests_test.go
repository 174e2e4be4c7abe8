package scrape

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perfscope/perfscope/expose"
	"github.com/perfscope/perfscope/internal/profseries"
)

// TestRequestsScraped scrapes a target that serves its profiles with
// expose and its application behind expose.Middleware, under a load
// that runs until the test ends: the first CPU scrape is the counts'
// baseline, later ones carry the requests served over their window,
// which the load's route has, and together they are no more than the
// load made.
func TestRequestsScraped(t *testing.T) {
	prof, err := expose.Start(context.Background(), expose.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prof.Close() })
	mux := http.NewServeMux()
	const route = "GET /scrape-test/pad"
	mux.HandleFunc(route, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	app := httptest.NewServer(expose.Middleware(mux))
	t.Cleanup(app.Close)

	var made atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		for ctx.Err() == nil {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, app.URL+"/scrape-test/pad", nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				made.Add(1)
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-loadDone })

	addr := strings.TrimSuffix(strings.TrimPrefix(prof.URL(), "http://"), "/debug/pprof/")
	m := &memSink{}
	s := New(config(t, "counted", []string{"cpu"}, addr), m, Options{})
	start(t, s)
	counted := func() []*profseries.Scrape {
		var out []*profseries.Scrape
		for _, sc := range m.of(addr, "cpu") {
			if sc.Requests != nil {
				out = append(out, sc)
			}
		}
		return out
	}
	eventually(t, "two CPU scrapes with request counts", func() bool { return len(counted()) >= 2 })
	if first := m.of(addr, "cpu")[0]; first.Requests != nil {
		t.Errorf("the first CPU scrape has request counts %+v: it is the baseline", first.Requests)
	}
	var sum int64
	for _, sc := range counted() {
		n := sc.Requests.ByRoute()[route]
		if n <= 0 || sc.Requests.Total < n || sc.Requests.Span <= 0 {
			t.Errorf("scrape over %v..%v: %d requests of %s, %d in all, over %s", sc.Start, sc.End, n, route, sc.Requests.Total, sc.Requests.Span)
		}
		sum += n
	}
	// Read after the scrapes: the load made at least what was counted.
	if got := made.Load(); sum > got {
		t.Errorf("%d requests counted, more than the %d made", sum, got)
	}
}

// TestRequestsNotCounted scrapes a target that serves net/http/pprof
// alone: its CPU scrapes carry no request counts (unknown, not zero),
// and the scraper asked for them once.
func TestRequestsNotCounted(t *testing.T) {
	var asked atomic.Int64
	mux := http.NewServeMux()
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/debug/metrics" {
			asked.Add(1)
		}
		http.DefaultServeMux.ServeHTTP(w, r)
	}))
	addr := serve(t, mux)
	m := &memSink{}
	s := New(config(t, "uncounted", []string{"cpu"}, addr), m, Options{})
	start(t, s)
	eventually(t, "three CPU scrapes", func() bool { return len(m.of(addr, "cpu")) >= 3 })
	for _, sc := range m.of(addr, "cpu") {
		if sc.Requests != nil {
			t.Errorf("a target that counts no requests has counts %+v", sc.Requests)
		}
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("request counts asked %d times, want once", n)
	}
}

func TestRequestsBetween(t *testing.T) {
	counts := func(total uint64, routes ...expose.RouteCount) expose.RequestCounts {
		return expose.RequestCounts{Total: total, Routes: routes}
	}
	a := expose.RouteCount{Route: "GET /a", Method: "GET", Count: 10}
	b := expose.RouteCount{Route: "", Method: "GET", Count: 2}
	for _, tt := range []struct {
		name     string
		from, to expose.RequestCounts
		want     string
	}{
		{"grown", counts(12, a, b), counts(17, expose.RouteCount{Route: "GET /a", Method: "GET", Count: 14}, expose.RouteCount{Route: "", Method: "GET", Count: 3}),
			`&{5 [{GET /a GET 4} { GET 1}] 0s}`},
		{"new route", counts(10, a), counts(12, a, b), `&{2 [{ GET 2}] 0s}`},
		{"idle", counts(10, a), counts(10, a), `&{0 [] 0s}`},
		{"a count went back", counts(12, a, b), counts(13, expose.RouteCount{Route: "GET /a", Method: "GET", Count: 1}, expose.RouteCount{Route: "", Method: "GET", Count: 12}), `<nil>`},
		{"the total went back", counts(12, a, b), counts(3, expose.RouteCount{Route: "", Method: "GET", Count: 3}), `<nil>`},
		{"a route gone", counts(12, a, b), counts(12, expose.RouteCount{Route: "", Method: "GET", Count: 12}), `<nil>`},
	} {
		s := fmt.Sprint(requestsBetween(tt.from, tt.to))
		if s != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, s, tt.want)
		}
	}
}
