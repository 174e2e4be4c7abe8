package server

import (
	"encoding/json"
	"html"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// requestsOfRun is what a scraper would have counted of the committed
// run over its CPU profile's window: the run's throughput over that
// window, all on leftpad's route. The scrape stores the profile as 10 s
// long, so the counts' span is 10 s too.
func requestsOfRun(t testing.TB, run string) *profseries.Requests {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "findings", "testdata", "runs", run, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Window float64 `json:"profile_window_seconds"`
		Load   struct {
			RPS float64 `json:"throughput_rps"`
		} `json:"load"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.Window <= 0 || r.Load.RPS <= 0 {
		t.Fatalf("run %s: window %v, %v requests/s (%v)", run, r.Window, r.Load.RPS, err)
	}
	n := int64(math.Round(r.Load.RPS * r.Window))
	return &profseries.Requests{Total: n, Routes: []profseries.RouteRequests{{Route: "GET /v1/leftpad/", Method: "GET", Count: n}}, Span: 10 * time.Second}
}

// TestDeploysPerRequest stores the deploy of leftpad naive → optimized
// with the requests each run served: the API judges it by CPU per
// request and finds less of it after, in all and on the route; the
// deploys page and the home page say so, with the times per request.
func TestDeploysPerRequest(t *testing.T) {
	st, _ := openSQLiteBackend(t)
	ts := startServer(t, Config{Store: st, NoCompiler: true})
	storeDeployCounted(t, st, true)
	get := func(path string) (int, string) {
		t.Helper()
		code, b := ts.do(t, http.MethodGet, path, "", "", nil)
		return code, html.UnescapeString(string(b))
	}

	code, b := get("/api/v1/profiles/deploys?since=1h")
	var dr profseries.DeployReport
	if err := json.Unmarshal([]byte(b), &dr); code != http.StatusOK || err != nil || len(dr.Deploys) != 1 {
		t.Fatalf("deploys API: %d (%v), want one deploy: %s", code, err, b)
	}
	d := dr.Deploys[0]
	if d.Compared != profseries.ComparedPerRequest || d.PerRequest == nil || !strings.Contains(b, `"compared":"cpu_per_request"`) {
		t.Fatalf("compared %q (%s), want per request", d.Compared, d.Basis)
	}
	pr := d.PerRequest
	t.Logf("CPU per request %s → %s (%+.0f%%, p=%.2g)", time.Duration(pr.Total.Before*1e9), time.Duration(pr.Total.After*1e9), 100*pr.Total.Change, pr.Total.P)
	if !pr.Total.Significant || pr.Total.Change >= 0 || len(pr.Routes) != 1 || pr.Routes[0].Route != "GET /v1/leftpad/" ||
		!pr.Routes[0].Significant || pr.Routes[0].Change >= 0 {
		t.Errorf("CPU per request %+v, routes %+v: want less after, significant, in all and on the route", pr.Total, pr.Routes)
	}
	// The fields the API had before are there as they were.
	for _, field := range []string{`"before_scrapes":8`, `"after_scrapes":8`, `"judged":true`, `"changes":[{"function":`, `"basis":"CPU seconds per request`} {
		if !strings.Contains(b, field) {
			t.Errorf("deploys API lacks %s: %s", field, b)
		}
	}

	perRequest := regexp.MustCompile(`<tr class="better"><td class="route">all requests</td><td class="num">[0-9.]+µs</td><td class="num">[0-9.]+µs</td><td class="delta num">-[0-9.]+%</td>`)
	code, page := get("/deploys?since=24h")
	if code != http.StatusOK || !perRequest.MatchString(page) || !strings.Contains(page, "compared: CPU per request · requests ") ||
		!strings.Contains(page, "<code>GET /v1/leftpad/</code>") {
		t.Errorf("deploys page: %d, want CPU per request of all requests and of the route, less after:\n%s", code, page)
	}
	code, home := get("/")
	i := strings.Index(home, `<section class="home-deploys">`)
	if code != http.StatusOK || i < 0 {
		t.Fatalf("home: %d, no deploys section:\n%s", code, home)
	}
	section := home[i : i+strings.Index(home[i:], "</section>")]
	row := regexp.MustCompile(`<tr class="better"><td class="delta num">-[0-9.]+%</td><td class="route">CPU per request</td><td class="num">[0-9.]+µs → [0-9.]+µs</td></tr>`)
	if !row.MatchString(section) || !strings.Contains(section, "compared: CPU per request") {
		t.Errorf("the home page's deploy does not show CPU per request falling:\n%s", section)
	}
}
