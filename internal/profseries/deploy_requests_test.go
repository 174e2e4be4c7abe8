package profseries

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profiles"
)

// TestDeployPerRequest judges a deploy of the committed leftpad CPU
// scrapes against the same scrapes serving half the requests: the
// profile's shares do not move, so shares alone see nothing, while CPU
// per request doubles, in all and on the route the profiles are
// labelled with. Without request counts on one side the deploy is
// judged by shares, and says why.
func TestDeployPerRequest(t *testing.T) {
	c, dict := NewCodec(), NewDictionary()
	ps := realProfiles(t, CPU)
	const route = "GET /v1/leftpad/"
	var routeNS []int64
	for _, p := range ps {
		rs, err := profiles.Routes(p, profiles.SampleCPU, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rs, func(r profiles.RouteShare) bool { return r.Route == route })
		if i < 0 {
			t.Fatalf("committed CPU profiles have no samples labelled %q: %+v", route, rs)
		}
		routeNS = append(routeNS, rs[i].Value)
	}
	side := func(requests int64, from time.Time) []Window {
		var ws []Window
		for k := range 2 {
			for i, p := range ps {
				w, _ := window(t, c, dict, p)
				w.Start = from.Add(time.Duration(k*len(ps)+i) * 10 * time.Second)
				if requests > 0 {
					// Different counts per scrape, so the test's ratios
					// are not all ties.
					n := requests + int64(i)
					w.Requests = &Requests{Total: n + 3, Routes: []RouteRequests{{Route: route, Method: "GET", Count: n}, {Route: "", Method: "GET", Count: 3}}}
				}
				ws = append(ws, w)
			}
		}
		return ws
	}
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	o := DeployOptions{}.withDefaults()
	before := side(1000, at.Add(-10*time.Minute))

	d, err := compareReleases(before, side(500, at), dict, o)
	if err != nil {
		t.Fatal(err)
	}
	if d.Compared != ComparedPerRequest || d.PerRequest == nil || !strings.Contains(d.Basis, "per request") {
		t.Fatalf("compared %q (%s), per request %+v", d.Compared, d.Basis, d.PerRequest)
	}
	pr := d.PerRequest
	if pr.BeforeRequests != 2*(4*1003+6) || pr.AfterRequests != 2*(4*503+6) {
		t.Errorf("requests compared %d before, %d after", pr.BeforeRequests, pr.AfterRequests)
	}
	if !pr.Total.Significant || pr.Total.Change < 0.9 || pr.Total.Change > 1.1 || pr.Total.P >= o.Alpha {
		t.Errorf("total CPU per request %+v, want about twice as much, significant", pr.Total)
	}
	if len(pr.Routes) != 1 || pr.Routes[0].Route != route || !pr.Routes[0].Significant || pr.Routes[0].Change < 0.9 {
		t.Fatalf("routes %+v, want %s about twice as much, significant", pr.Routes, route)
	}
	// The route's median, as the profiles have it.
	var ratios []float64
	for i, ns := range routeNS {
		ratios = append(ratios, float64(ns)/1e9/float64(1000+i))
	}
	if want := median(ratios); pr.Routes[0].Before != want {
		t.Errorf("%s before: %g s per request, want %g", route, pr.Routes[0].Before, want)
	}
	if pr.Significant != 2 {
		t.Errorf("%d significant changes, want 2", pr.Significant)
	}
	if len(d.Changes) != 0 {
		t.Errorf("the same profiles on both sides, yet shares changed: %+v", d.Changes)
	}

	d, err = compareReleases(before, side(0, at), dict, o)
	if err != nil {
		t.Fatal(err)
	}
	if d.Compared != ComparedShares || d.PerRequest != nil || !strings.Contains(d.Basis, "no scrape after the deploy counted requests") || d.NotPerRequest == "" {
		t.Errorf("without counts after: compared %q (%s), per request %+v", d.Compared, d.Basis, d.PerRequest)
	}
}
