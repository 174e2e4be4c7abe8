package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestLeaksPageAndAPI stores the committed naive leftpad run's goroutine
// profile as 15 snapshots 10 s apart — a steady service — and asks the
// leaks API and page: the series is judged and nothing is named; bad input
// keeps the form as typed with its reason; a range without snapshots is
// a 404 that says so. The deploys API finds no deploy in them.
func TestLeaksPageAndAPI(t *testing.T) {
	st, _ := openSQLiteBackend(t)
	data, err := os.ReadFile(filepath.Join("..", "findings", "testdata", "runs", "leftpad-naive", "goroutine_end.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-5 * time.Minute).Truncate(time.Second)
	for i := range 15 {
		p, err := profile.ParseData(data)
		if err != nil {
			t.Fatal(err)
		}
		at := start.Add(time.Duration(i) * 10 * time.Second)
		s := &profseries.Scrape{Target: scrapedTarget, Type: profseries.Goroutine, Start: at, End: at, Process: profseries.Process{Generation: 1}, Profile: p}
		if err := st.Append(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	ts := startServer(t, Config{Store: st, NoCompiler: true})
	sel := url.QueryEscape(`{job="leftpad"}`)

	code, b := ts.do(t, http.MethodGet, "/api/v1/profiles/leaks?since=1h&query="+sel, "", "", nil)
	var rep profseries.LeakReport
	if err := json.Unmarshal(b, &rep); code != http.StatusOK || err != nil {
		t.Fatalf("leaks API: %d (%v): %s", code, err, b)
	}
	if len(rep.Leaks) != 0 || len(rep.Judged) != 1 || rep.Judged[0].Judged != 15 || rep.Judged[0].Stacks == 0 {
		t.Errorf("want the goroutine series judged on 15 snapshots and nothing named: %s", b)
	}

	code, b = ts.do(t, http.MethodGet, "/leaks?since=1h&target="+sel, "", "", nil)
	if code != http.StatusOK || !strings.Contains(string(b), "No leak named") || !strings.Contains(string(b), "Series judged") {
		t.Errorf("leaks page: %d, want it to say no leak was named among the series judged:\n%s", code, b)
	}
	code, b = ts.do(t, http.MethodGet, "/leaks?target="+url.QueryEscape(`{job="leftpad`), "", "", nil)
	if code != http.StatusBadRequest || !strings.Contains(string(b), `value="{job=&#34;leftpad"`) || !strings.Contains(string(b), "target: ") {
		t.Errorf("a bad selector: %d, want 400 with the form as typed and the reason:\n%s", code, b)
	}
	code, b = ts.do(t, http.MethodGet, "/leaks?since=1h&target="+url.QueryEscape(`{job="nothing"}`), "", "", nil)
	if code != http.StatusNotFound || !strings.Contains(string(b), "no goroutine or heap snapshots") {
		t.Errorf("an empty range: %d, want 404 saying there are no snapshots:\n%s", code, b)
	}

	code, b = ts.do(t, http.MethodGet, "/api/v1/profiles/deploys?since=1h&type=goroutine&query="+sel, "", "", nil)
	var dr profseries.DeployReport
	if err := json.Unmarshal(b, &dr); code != http.StatusOK || err != nil || len(dr.Deploys) != 0 {
		t.Errorf("deploys API: %d (%v), want no deploy: %s", code, err, b)
	}
	if code, _ := ts.do(t, http.MethodGet, "/api/v1/profiles/deploys?type=bogus", "", "", nil); code != http.StatusBadRequest {
		t.Errorf("deploys API with a bad type: %d, want 400", code)
	}
}
