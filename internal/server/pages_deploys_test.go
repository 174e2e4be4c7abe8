package server

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/store"
)

// deployScrapes is how many CPU scrapes storeDeploy stores of each
// release.
const deployScrapes = 8

// storeDeploy stores a deploy of leftpad: the committed naive run's CPU
// profile as deployScrapes scrapes of scrapedTarget at version 1, 10 s
// apart, then the optimized run's as many at version 2, ending a minute
// ago. It returns the time of the deploy.
func storeDeploy(t testing.TB, st *store.DB) time.Time {
	t.Helper()
	return storeDeployCounted(t, st, false)
}

// storeDeployCounted is storeDeploy; with counted, each scrape carries
// the requests its run served over the profile's window, as a scraper
// reads them from expose's counts (see requestsOfRun).
func storeDeployCounted(t testing.TB, st *store.DB, counted bool) time.Time {
	t.Helper()
	at := time.Now().Add(-time.Minute - 2*deployScrapes*10*time.Second).Truncate(time.Second)
	var deployed time.Time
	for _, rel := range []struct{ run, version string }{{"leftpad-naive", "1"}, {"leftpad-optimized", "2"}} {
		data, err := os.ReadFile(filepath.Join("..", "findings", "testdata", "runs", rel.run, "cpu.pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{"version": rel.version}
		for _, l := range scrapedTarget {
			m[l.Name] = l.Value
		}
		target := profseries.NewLabels(m)
		deployed = at
		for range deployScrapes {
			p, err := profile.ParseData(data)
			if err != nil {
				t.Fatal(err)
			}
			p.TimeNanos, p.DurationNanos = at.UnixNano(), int64(10*time.Second)
			s := &profseries.Scrape{Target: target, Type: profseries.CPU, Start: at, End: at.Add(10 * time.Second),
				Process: profseries.Process{Generation: 1}, Profile: p, RawBytes: int64(len(data))}
			if counted {
				s.Requests = requestsOfRun(t, rel.run)
			}
			if err := st.Append(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			at = at.Add(10 * time.Second)
		}
	}
	return deployed
}

// TestDeploysOnHomeAndPage checks that the home page has no deploys
// section while no profile is stored, then, once leftpad naive was
// replaced by leftpad optimized, lists that deploy with a leftpad
// function whose share changed, linked to the service's deploys page,
// which shows the deploy's table; bad input keeps the form.
func TestDeploysOnHomeAndPage(t *testing.T) {
	st, _ := openSQLiteBackend(t)
	ts := startServer(t, Config{Store: st, NoCompiler: true})
	get := func(path string) (int, string) {
		t.Helper()
		code, b := ts.do(t, http.MethodGet, path, "", "", nil)
		return code, string(b)
	}
	if code, b := get("/"); code != http.StatusOK || strings.Contains(b, "home-deploys") {
		t.Errorf("home without profiles: %d, want 200 and no deploys section:\n%s", code, b)
	}

	storeDeploy(t, st)
	code, home := get("/")
	if code != http.StatusOK {
		t.Fatalf("home: %d\n%s", code, home)
	}
	i := strings.Index(home, `<section class="home-deploys">`)
	if i < 0 {
		t.Fatalf("home with a deploy stored has no deploys section:\n%s", home)
	}
	// The section as a browser reads it: entities decoded.
	section := html.UnescapeString(home[i : i+strings.Index(home[i:], "</section>")])
	service := `{job="leftpad", service="left pad", team="pay-ments ✓"}`
	link := "/deploys?" + url.Values{"since": {"24h"}, "target": {service}}.Encode()
	for _, want := range []string{"1 → 2", `<h3><a href="` + link + `">`} {
		if !strings.Contains(section, want) {
			t.Errorf("the home page's deploys do not show %q:\n%s", want, section)
		}
	}
	row := regexp.MustCompile(`<tr class="(up|down)"><td class="delta num">[+-][0-9.]+ pts</td><td class="function"><code>[^<]+</code></td><td class="num">[0-9.]+% → [0-9.]+%</td></tr>`)
	if n := len(row.FindAllString(section, -1)); n == 0 || n > 5 {
		t.Errorf("the home page's deploy lists %d changes with their share before → after, want 1 to 5:\n%s", n, section)
	}

	// The counts agree with the API's: the home page lists the largest
	// five and counts the rest, the deploys page lists them all.
	code, b := get("/api/v1/profiles/deploys?since=1h")
	var dr profseries.DeployReport
	if err := json.Unmarshal([]byte(b), &dr); code != http.StatusOK || err != nil || len(dr.Deploys) != 1 || dr.Deploys[0].Significant <= 5 {
		t.Fatalf("deploys API: %d (%v), want one deploy with more than 5 significant changes: %s", code, err, b)
	}
	significant := dr.Deploys[0].Significant
	if want := fmt.Sprintf("and %d more changes</a>", significant-5); !strings.Contains(section, want) {
		t.Errorf("the home page's deploy does not say %q:\n%s", want, section)
	}

	code, page := get(link)
	if n := strings.Count(page, `<td class="function">`); n != min(significant, dashboard.DeployPageRows) {
		t.Errorf("the deploys page lists %d changes, want the %d significant", n, significant)
	}
	page = html.UnescapeString(page)
	// The optimized leftpad spends less in the padding itself.
	leftpad := regexp.MustCompile(`<tr class="down"><td class="function"><code>[^<]*examples/leftpad\.[^<]*</code></td>`)
	if !leftpad.MatchString(page) {
		t.Errorf("the deploys page names no leftpad function whose share fell:\n%s", page)
	}
	if code != http.StatusOK || !strings.Contains(page, "1 → 2") || !strings.Contains(page, `<table class="list deploy-changes">`) ||
		!strings.Contains(page, "scrapes 8 before, 8 after") || !strings.Contains(page, "Mann–Whitney U") {
		t.Errorf("deploys page: %d, want the deploy from 1 to 2 with its table of changes:\n%s", code, page)
	}
	if code, b := get("/deploys?since=1h&target=" + url.QueryEscape(`{job="other"}`)); code != http.StatusNotFound || !strings.Contains(b, "no target with CPU profiles matches") {
		t.Errorf("deploys of no target: %d, want 404 saying so:\n%s", code, b)
	}
	if code, b := get("/deploys?since=1h&target=" + url.QueryEscape(`{job="leftpad`)); code != http.StatusBadRequest ||
		!strings.Contains(b, `value="{job=&#34;leftpad"`) || !strings.Contains(b, "target: ") {
		t.Errorf("a bad selector: %d, want 400 with the form as typed and the reason:\n%s", code, b)
	}
	if code, b := get("/deploys?since=soon"); code != http.StatusBadRequest || !strings.Contains(b, `value="soon"`) {
		t.Errorf("a bad range: %d, want 400 with the form as typed:\n%s", code, b)
	}
	if code, b := get("/deploys?since=1m"); code != http.StatusOK || !strings.Contains(b, "no deploy in the range") {
		t.Errorf("a range without deploy: %d, want 200 saying so:\n%s", code, b)
	}
}
