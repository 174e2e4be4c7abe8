package expose

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// readRequests reads the request counts /debug/metrics serves.
func readRequests(t *testing.T, s *Server) (*RequestCounts, MetricValue) {
	t.Helper()
	code, body := get(t, nil, strings.TrimSuffix(s.URL(), "pprof/")+"metrics", "")
	if code != http.StatusOK {
		t.Fatalf("GET /debug/metrics: status %d", code)
	}
	var snap MetricsSnapshot
	if err := json.Unmarshal(body, &snap); err != nil {
		t.Fatalf("GET /debug/metrics: %v", err)
	}
	return snap.Requests, snap.Metrics[RequestsMetric]
}

// countOf is the count of route and method in rc, 0 where it has none.
func countOf(rc *RequestCounts, route, method string) uint64 {
	for _, r := range rc.Routes {
		if r.Route == route && r.Method == method {
			return r.Count
		}
	}
	return 0
}

// TestRequestCounts serves requests through each middleware on a real
// server and checks that /debug/metrics counts each route and method
// exactly, the total with them.
func TestRequestCounts(t *testing.T) {
	prof := start(t, Options{})
	for _, mw := range middlewares {
		t.Run(mw.name, func(t *testing.T) {
			mux := http.NewServeMux()
			plain := "GET /count/" + mw.name + "/plain"
			wild := "POST /count/" + mw.name + "/item/{id}"
			mux.HandleFunc(plain, func(http.ResponseWriter, *http.Request) {})
			mux.HandleFunc(wild, func(http.ResponseWriter, *http.Request) {})
			app := httptest.NewServer(mw.wrap(mux))
			defer app.Close()

			before, _ := readRequests(t, prof)
			if before == nil {
				t.Fatal("no request counts served once a middleware was made")
			}
			for i := range 7 {
				get(t, nil, app.URL+"/count/"+mw.name+"/plain", "")
				resp, err := http.Post(fmt.Sprintf("%s/count/%s/item/%d", app.URL, mw.name, i), "text/plain", nil)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			get(t, nil, app.URL+"/count/"+mw.name+"/nothing", "")
			after, total := readRequests(t, prof)
			for _, c := range []struct {
				route, method string
				want          uint64
			}{{plain, "GET", 7}, {wild, "POST", 7}, {"", "GET", 1}} {
				if got := countOf(after, c.route, c.method) - countOf(before, c.route, c.method); got != c.want {
					t.Errorf("%q %s: counted %d requests, want %d", c.route, c.method, got, c.want)
				}
			}
			if got := after.Total - before.Total; got < 15 {
				t.Errorf("total grew by %d, want at least the 15 requests served", got)
			}
			var sum uint64
			for _, r := range after.Routes {
				sum += r.Count
			}
			if sum != after.Total || total.Value == nil || uint64(*total.Value) != after.Total || !total.Cumulative {
				t.Errorf("total %d, routes sum to %d, metric %s = %+v", after.Total, sum, RequestsMetric, total)
			}
		})
	}
}

// TestRequestCountsOff checks that counts are served only once a
// middleware counts: before, a process counts nothing, which is not
// the same as serving nothing.
func TestRequestCountsOff(t *testing.T) {
	c := newLabelCache()
	if rc := c.requestCounts(); rc != nil {
		t.Errorf("counts %+v served before any middleware", rc)
	}
	c.counting.Store(true)
	c.get("/a", "GET").served.Add(2)
	c.get("", "BREW").served.Add(1)
	rc := c.requestCounts()
	want := `{"total":3,"routes":[{"route":"","method":"_OTHER","count":1},{"route":"/a","method":"GET","count":2}]}`
	if b, _ := json.Marshal(rc); string(b) != want {
		t.Errorf("counts %s, want %s", b, want)
	}
}

// TestRequestCountsBeyondCache checks that the requests of routes beyond
// the cached ones are counted together, as OtherRoute.
func TestRequestCountsBeyondCache(t *testing.T) {
	c := newLabelCache()
	c.counting.Store(true)
	for i := range maxCachedRoutes + 10 {
		c.get(fmt.Sprintf("/redirect/%d/", i), "GET").served.Add(1)
	}
	rc := c.requestCounts()
	if got := countOf(rc, OtherRoute, "GET"); got != 10 || rc.Total != maxCachedRoutes+10 {
		t.Errorf("%d requests counted as %s, total %d; want 10 of %d", got, OtherRoute, rc.Total, maxCachedRoutes+10)
	}
}
