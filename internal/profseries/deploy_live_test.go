package profseries_test

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestDeploysOfLiveExamples scrapes leftpad naive as version 1, then,
// in its place, leftpad optimized as version 2 — the deploy of a fix —
// and asks for the deploys: one is found, between those versions, after
// the last scrape of version 1, and it names the functions the fix
// changed. Naive's padding loop and its per-call strings.Replacer take a
// share of the CPU that optimized does not spend.
func TestDeploysOfLiveExamples(t *testing.T) {
	bin, db := buildLeftpad(t)
	types := []string{profseries.CPU}
	// Requests pad to 1,000 characters: naive then spends most of each in
	// its padding loop, so the fix moves the loop's share by tens of
	// points whatever share of the machine the examples get (padding to
	// the example's usual 50, HTTP and the access log take most of a
	// request, and on a busy machine the loop's change fell below the
	// threshold while the logger's did not).
	const req = "/v1/leftpad/?str=test&len=1000&chr=*"
	v1 := scrapeLeftpad(t, bin, db, []liveTarget{{"naive", map[string]string{"version": "1"}, req}}, types, 10, 9*time.Second)
	v2 := scrapeLeftpad(t, bin, db, []liveTarget{{"optimized", map[string]string{"version": "2"}, req}}, types, 10, 9*time.Second)
	sel, err := profseries.ParseSelector(`{job="leftpad"}`)
	if err != nil {
		t.Fatal(err)
	}
	// Every significant change is listed, not the default ten largest:
	// on a busy machine the fix's own change can rank below those of
	// the HTTP server's functions, whose shares grow as the padding's
	// fall (measured beside two burners: leftpad's loop 11th, after
	// system calls, net/http and bufio).
	rep, err := profseries.FindDeploys(context.Background(), db, sel, v1.from.Add(-time.Minute), v2.to.Add(time.Minute), profseries.DeployOptions{Rows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deploys) != 1 {
		t.Fatalf("%d deploys found, want 1: %+v", len(rep.Deploys), rep.Deploys)
	}
	d := rep.Deploys[0]
	if d.Before.Version != "1" || d.After.Version != "2" || d.Service.String() != `{job="leftpad"}` {
		t.Errorf("deploy of %s from %s to %s, want {job=\"leftpad\"} from 1 to 2", d.Service, d.Before, d.After)
	}
	if d.At.Before(v1.to) || d.At.After(v2.to) {
		t.Errorf("deployed at %s, not between version 1's end %s and version 2's %s", d.At, v1.to, v2.to)
	}
	if !d.Judged || d.BeforeScrapes < 10 || d.AfterScrapes < 10 {
		t.Errorf("judged %v on %d scrapes before and %d after, want at least 10 each", d.Judged, d.BeforeScrapes, d.AfterScrapes)
	}
	var names []string
	for _, c := range d.Changes {
		t.Logf("%s: %.1f%% → %.1f%% (p=%.2g)", c.Function, 100*c.Before, 100*c.After, c.P)
		names = append(names, c.Function)
		if c.P >= rep.Alpha || (c.Delta > -rep.MinChange && c.Delta < rep.MinChange) {
			t.Errorf("%s listed with p=%.2g and a change of %.3f", c.Function, c.P, c.Delta)
		}
	}
	// The fix is named by a leftpad function whose share fell, or by
	// the naive loop's own call, runtime.concatstring2 (s = string(chr)
	// + s), which optimized never makes. On a busy machine the loop is
	// preempted over and over, and a sample taken in the scheduler holds
	// the scheduler's frames only (measured beside two burners:
	// runtime.goschedImpl 44% of naive's CPU): the leftpad functions'
	// shares then fall by less than the threshold, while the loop's
	// concatenation still goes from a fifth of the CPU to nothing.
	named := slices.ContainsFunc(names, func(f string) bool {
		return strings.Contains(f, "leftpad.") || f == "runtime.concatstring2"
	})
	if len(d.Changes) != d.Significant || len(d.Changes) == 0 || !named {
		t.Errorf("neither a leftpad function nor the naive loop's concatenation among the %d significant changes (%d listed): %q", d.Significant, len(d.Changes), names)
	}
	for _, c := range d.Changes {
		if c.Function == "runtime.concatstring2" && c.Delta >= 0 {
			t.Errorf("runtime.concatstring2 grew (%+.3f) where the fix removes it", c.Delta)
		}
	}
	if !slices.IsSortedFunc(d.Changes, func(a, b profseries.DeployChange) int { return cmp.Compare(math.Abs(b.Delta), math.Abs(a.Delta)) }) {
		t.Errorf("changes not listed largest first: %+v", d.Changes)
	}

	// leftpad serves its API behind expose.Middleware, so the scraper
	// counted its requests and the deploy is judged by CPU per request:
	// optimized spends less on each, in all and on the API's route.
	pr := d.PerRequest
	if d.Compared != profseries.ComparedPerRequest || pr == nil {
		t.Fatalf("compared %q: %s", d.Compared, d.Basis)
	}
	t.Logf("CPU per request: %.1fµs → %.1fµs (%+.0f%%, p=%.2g) over %d and %d requests",
		1e6*pr.Total.Before, 1e6*pr.Total.After, 100*pr.Total.Change, pr.Total.P, pr.BeforeRequests, pr.AfterRequests)
	if pr.BeforeRequests <= 0 || pr.AfterRequests <= 0 || !(pr.Total.After < pr.Total.Before) || pr.Total.Change >= 0 {
		t.Errorf("CPU per request %+v over %d and %d requests: want less after", pr.Total, pr.BeforeRequests, pr.AfterRequests)
	}
	api := slices.IndexFunc(pr.Routes, func(c profseries.PerRequestChange) bool { return c.Route == "GET /v1/leftpad/" })
	if api < 0 {
		t.Fatalf("the API's route was not compared: %+v", pr.Routes)
	}
	if r := pr.Routes[api]; !(r.After < r.Before) {
		t.Errorf("%s: %g s per request before, %g after: want less after", r.Route, r.Before, r.After)
	}
}
