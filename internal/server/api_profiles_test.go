package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/store"
)

func TestProfileSeriesAPISQLite(t *testing.T) {
	st, _ := openSQLiteBackend(t)
	testProfileSeriesAPI(t, st)
}

func TestProfileSeriesAPIPostgres(t *testing.T) {
	testProfileSeriesAPI(t, openPostgresBackend(t))
}

// scrapedTarget is the target the profile-series tests store scrapes of:
// labels with spaces, dashes and unicode, kept as written.
var scrapedTarget = profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "127.0.0.1:6060", "team": "pay-ments ✓", "service": "left pad"})

// storeScrapes stores the committed naive leftpad run's CPU and allocs
// profiles as three scrapes each of scrapedTarget, 10 s apart, ending a
// minute ago.
func storeScrapes(t *testing.T, st *store.DB) {
	t.Helper()
	dir := filepath.Join("..", "findings", "testdata", "runs", "leftpad-naive")
	start := time.Now().Add(-time.Minute - 30*time.Second).Truncate(time.Second)
	for _, typ := range []string{profseries.CPU, profseries.Allocs} {
		data, err := os.ReadFile(filepath.Join(dir, typ+".pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			p, err := profile.ParseData(data)
			if err != nil {
				t.Fatal(err)
			}
			at := start.Add(time.Duration(i) * 10 * time.Second)
			p.TimeNanos, p.DurationNanos = at.UnixNano(), int64(10*time.Second)
			s := &profseries.Scrape{Target: scrapedTarget, Type: typ, Start: at, End: at.Add(10 * time.Second),
				Process: profseries.Process{Generation: 1}, Profile: p, RawBytes: int64(len(data))}
			if typ == profseries.CPU && i == 2 {
				s.Process.Generation = 2 // restarted: the merge says so
			}
			if err := st.Append(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// testProfileSeriesAPI checks the profile-series endpoints on stored
// scrapes: the answers, and a status with one reason for each kind of bad
// request.
func testProfileSeriesAPI(t *testing.T, st *store.DB) {
	storeScrapes(t, st)
	ts := startServer(t, Config{Store: st, NoCompiler: true})
	sel := url.QueryEscape(`{team="pay-ments ✓"}`)
	get := func(path string) (int, []byte) {
		t.Helper()
		return ts.do(t, http.MethodGet, path, "", "", nil)
	}

	t.Run("targets", func(t *testing.T) {
		code, b := get("/api/v1/profiles/targets?query=" + sel)
		var ts []store.ProfileTarget
		if err := json.Unmarshal(b, &ts); code != http.StatusOK || err != nil {
			t.Fatalf("%d (%v): %s", code, err, b)
		}
		if len(ts) != 2 || ts[0].Labels.String() != scrapedTarget.String() || ts[0].Scrapes != 3 {
			t.Errorf("want the target's allocs and cpu series of 3 scrapes each, labels as written; got %s", b)
		}
	})

	t.Run("merge", func(t *testing.T) {
		code, b := get("/api/v1/profiles/merge?since=1h&query=" + sel)
		if code != http.StatusOK {
			t.Fatalf("%d: %s", code, b)
		}
		p, err := profile.ParseData(b)
		if err != nil {
			t.Fatalf("not a profile: %v", err)
		}
		if len(p.Sample) == 0 || len(p.SampleType) != 2 || p.SampleType[1].Type != "cpu" {
			t.Errorf("merged: %d samples of %v, want CPU samples", len(p.Sample), p.SampleType)
		}
		if !slices.ContainsFunc(p.Comments, func(c string) bool { return strings.Contains(c, "2 processes merged") }) {
			t.Errorf("merged over a restart, the profile's comments %q do not say so", p.Comments)
		}
		// Three scrapes of the same profile: three times each sample.
		one, err := os.ReadFile(filepath.Join("..", "findings", "testdata", "runs", "leftpad-naive", "cpu.pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		q, err := profile.ParseData(one)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := total(p, 1), 3*total(q, 1); got != want {
			t.Errorf("merged CPU total %d, want three scrapes' %d", got, want)
		}
	})

	t.Run("top", func(t *testing.T) {
		code, b := get("/api/v1/profiles/top?type=allocs&n=5&query=" + sel)
		if code != http.StatusOK || !strings.Contains(string(b), `"function":"strings.(*Replacer).build"`) {
			t.Errorf("%d: %s", code, b)
		}
	})

	t.Run("function", func(t *testing.T) {
		// No step asked: an hour in steps of 20 s, as the page draws
		// it; the three scrapes 10 s apart fall in two of them.
		code, b := get("/api/v1/profiles/function?type=allocs&since=1h&name=" + url.QueryEscape("strings.(*Replacer).build") + "&query=" + sel)
		var got struct{ Points []profseries.FunctionPoint }
		if err := json.Unmarshal(b, &got); code != http.StatusOK || err != nil {
			t.Fatalf("%d (%v): %s", code, err, b)
		}
		pts := got.Points
		if len(pts) != 2 || pts[1].Start.Sub(pts[0].Start) != 20*time.Second || pts[0].Scrapes+pts[1].Scrapes != 3 || pts[0].CumShare <= 0 {
			t.Errorf("want two steps of 20 s holding the 3 scrapes, the function's share in them; got %s", b)
		}
	})

	t.Run("findings", func(t *testing.T) {
		code, b := get("/api/v1/profiles/findings?format=text&query=" + sel)
		if code != http.StatusOK || !strings.Contains(string(b), "perfscope report: profiles scraped from") || !strings.Contains(string(b), "(built-per-call)") {
			t.Errorf("%d: %s", code, b)
		}
	})

	bad := []struct {
		path string
		code int
		why  string // in the error
	}{
		{"/api/v1/profiles/targets?query=" + url.QueryEscape(`{job="leftpad"`), 400, "query: "},
		{"/api/v1/profiles/merge?query=" + url.QueryEscape(`{job~"x"}`), 400, "query: "},
		{"/api/v1/profiles/top?query=" + url.QueryEscape(`{job=~"("}`), 400, "query: "},
		{"/api/v1/profiles/merge?type=cpuu", 400, `"cpuu"`},
		{"/api/v1/profiles/top?type=heapp", 400, `"heapp"`},
		{"/api/v1/profiles/merge?from=1h&to=2h", 400, "empty time range"},
		{"/api/v1/profiles/merge?since=yesterday", 400, "yesterday"},
		{"/api/v1/profiles/top?n=0", 400, "n "},
		{"/api/v1/profiles/top?order=sideways", 400, "order"},
		{"/api/v1/profiles/function", 400, "name"},
		{"/api/v1/profiles/function?name=main.main&step=-1m", 400, "step"},
		{"/api/v1/profiles/diff?ago=soon", 400, "ago"},
		{"/api/v1/profiles/findings?format=xml", 400, "xml"},
		{"/api/v1/profiles/merge?query=" + url.QueryEscape(`{job="nothing here"}`), 404, "no profiles stored"},
		{"/api/v1/profiles/merge?type=heap", 404, "no profiles stored"},
		{"/api/v1/profiles/top?from=30d&to=29d", 404, "no profiles stored"},
		{"/api/v1/profiles/diff?ago=24h", 404, "no profiles stored"},
		{"/api/v1/profiles/findings?query=" + url.QueryEscape(`{job="nothing here"}`), 404, "no profiles stored"},
		{"/api/v1/scrape/targets", 404, "perfscope serve --scrape"},
	}
	for _, c := range bad {
		code, b := get(c.path)
		var e struct {
			Error  string
			Status int
		}
		if err := json.Unmarshal(b, &e); err != nil || code != c.code || e.Status != c.code || !strings.Contains(e.Error, c.why) {
			t.Errorf("GET %s: %d %s, want %d with an error naming %q", c.path, code, b, c.code, c.why)
		}
	}
}

// total sums the values of sample type i of p.
func total(p *profile.Profile, i int) int64 {
	var n int64
	for _, s := range p.Sample {
		n += s.Value[i]
	}
	return n
}
