package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/scrape"
)

// startWatchScraper runs a real scraper into st beside the stored scrapes:
// job "live" scrapes this test's own net/http/pprof (heap and goroutines,
// every second), job "broken" a server that answers 404 to everything. It
// returns once both have been scraped, with the scraper to serve.
func startWatchScraper(t *testing.T, sink scrape.Sink) *scrape.Scraper {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	live := httptest.NewServer(mux)
	t.Cleanup(live.Close)
	broken := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(broken.Close)
	path := filepath.Join(t.TempDir(), "scrape.yml")
	conf := fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 5s}
scrape_configs:
  - job_name: live
    profiles: [heap, goroutine]
    static_configs:
      - targets: [%q]
  - job_name: broken
    profiles: [heap]
    static_configs:
      - targets: [%q]
`, live.Listener.Addr().String(), broken.Listener.Addr().String())
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := scrape.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := scrape.New(cfg, sink, scrape.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sc.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		scraped := 0
		for _, h := range sc.Targets() {
			if h.Scrapes > 0 && (h.Up && h.Collected >= 2 || h.LastError != "") {
				scraped++
			}
		}
		if scraped == 2 {
			return sc
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scraper has not scraped both targets in a minute: %+v", sc.Targets())
		}
		<-tick.C
	}
}

// TestBrowserWatchPages drives a real Chromium through the services page and
// the service page on real scrapes: the stored leftpad scrapes and a live
// scraper's targets.
func TestBrowserWatchPages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scraper and a browser")
	}
	ctx := newBrowser(t)
	// Every page, its script and pprof's frames run under the policies
	// the server sends, with nothing refused.
	rec := recordCSP(t, ctx)
	t.Cleanup(func() {
		if v := rec.take(); len(v) > 0 {
			t.Errorf("the browser refused what the watch pages do: %q", v)
		}
	})
	st, _ := openSQLiteBackend(t)
	storeWatchScrapes(t, st)
	sc := startWatchScraper(t, st)
	ts := startServer(t, Config{Store: st, Scraper: sc, NoCompiler: true})
	art := artifactsDir(t)
	text := func(t *testing.T, ctx context.Context, sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
	count := func(t *testing.T, ctx context.Context, sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+jsString(sel)+`).length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("services", func(t *testing.T) {
		ctx, cancel := step(ctx)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/services"), chromedp.WaitVisible(chromedp.CSS("table.services"))); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, art, "services")
		rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("tr.service")].map(r => r.innerText.replace(/\s+/g, " "))`))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{
			"worker · 127.0.0.1:7002":  {"stored", "cores", "MiB"},
			"leftpad · 127.0.0.1:7001": {"version 1.1", "stored"},
			"live · ":                  {"up", "heap, goroutine", "no cpu stored", "MiB"},
			"broken · ":                {"down", "404", "no heap stored"},
		}
		for name, parts := range want {
			found := false
			for _, r := range rows {
				if strings.HasPrefix(r, name) {
					found = true
					for _, p := range parts {
						if !strings.Contains(r, p) {
							t.Errorf("the row of %s does not say %q: %s", name, p, r)
						}
					}
				}
			}
			if !found {
				t.Errorf("no row for %s among %q", name, rows)
			}
		}
		if len(rows) != 4 {
			t.Errorf("want 4 targets (leftpad's two versions in one row), got %d: %q", len(rows), rows)
		}
		if n := count(t, ctx, "tr.service svg.spark polyline"); n < 6 {
			t.Errorf("%d sparklines drawn; want CPU, heap and goroutines of both stored targets at least", n)
		}
	})

	worker := ts.URL + "/services/view?" + url.Values{"target": {`{job="worker"}`}, "from": {"1h"}}.Encode()

	t.Run("flame graph and table", func(t *testing.T) {
		ctx, cancel := flow(ctx)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/services"), chromedp.Click(chromedp.CSS(`tr.service a[href*="worker"]`)), chromedp.WaitVisible(chromedp.CSS("table.top"))); err != nil {
			t.Fatal(err)
		}
		if n := count(t, ctx, "svg.timechart polyline"); n < 3 {
			t.Errorf("%d lines in the charts; want CPU, heap and goroutines", n)
		}
		// The flame graph in its frame, painted with the service's code.
		boxes, err := chromedp.Run(ctx, chromedp.Poll[[]string](`(() => {
			const f = document.querySelector("iframe.flame");
			const d = f && f.contentDocument;
			const b = d ? [...d.querySelectorAll("#stack-chart .boxtext")].map(e => e.innerText) : [];
			return b.length > 0 ? b : null;
		})()`, chromedp.WithPollingTimeout(20*time.Second)))
		screenshot(t, ctx, art, "service")
		if err != nil || len(boxes) < 5 {
			t.Fatalf("the range's flame graph has no boxes (%v): %q", err, boxes)
		}
		first := text(t, ctx, "table.top tbody tr:first-child td.fn")
		if first != "internal/runtime/syscall/linux.Syscall6" {
			t.Errorf("the table's first function by flat is %q; want the syscall the naive service writes its log with", first)
		}
		// Sort by name, then search.
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`table.top th a[href*="sort=name"]`)), chromedp.WaitVisible(chromedp.CSS(`table.top th a.here[href*="sort=name"]`))); err != nil {
			t.Fatal(err)
		}
		names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.top td.fn")].map(e => e.innerText)`))
		if err != nil || len(names) < 10 {
			t.Fatalf("sorted table: %q %v", names, err)
		}
		for i := 1; i < len(names); i++ {
			if names[i-1] > names[i] {
				t.Fatalf("sorted by name, %q comes before %q", names[i-1], names[i])
			}
		}
		// The page of the search keeps it in its field.
		err = chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`form.search input[name=search]`), "leftpad"), chromedp.Submit(chromedp.CSS(`form.search input[name=search]`)),
			chromedp.WaitVisible(chromedp.CSS(`form.search input[name=search][value="leftpad"]`)), chromedp.WaitVisible(chromedp.CSS(`table.top`)))
		if err != nil {
			t.Fatal(err)
		}
		found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.top td.fn")].map(e => e.innerText)`))
		if err != nil || len(found) == 0 {
			t.Fatalf("searching leftpad found %q (%v)", found, err)
		}
		for _, f := range found {
			if !strings.Contains(strings.ToLower(f), "leftpad") {
				t.Errorf("searching leftpad shows %q", f)
			}
		}
		// One function's series, from the table.
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`table.top td.fn a`)), chromedp.WaitVisible(chromedp.CSS(`section.function svg.timechart`))); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, art, "service-function")
	})

	t.Run("compare", func(t *testing.T) {
		ctx, cancel := flow(ctx)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Navigate(worker), chromedp.Click(chromedp.CSS("a.now-vs-hour")), chromedp.WaitVisible(chromedp.CSS("section.compare"))); err != nil {
			t.Fatal(err)
		}
		// The stored scrapes are of the last half hour: an hour before
		// holds none, and the page says so.
		if s := text(t, ctx, "section.compare"); !strings.Contains(s, "holds no cpu profiles") {
			t.Errorf("comparing with an empty hour says %q", s)
		}
		leftpad := ts.URL + "/services/view?" + url.Values{"target": {`{job="leftpad"}`}, "from": {"1h"}}.Encode()
		if err := chromedp.Do(ctx, chromedp.Navigate(leftpad), chromedp.WaitVisible(chromedp.CSS("section.gauges svg.timechart"))); err != nil {
			t.Fatal(err)
		}
		// Each chart marks where 1.1 began, where its line breaks.
		marks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("section.gauges svg.timechart g.release text")].map(e => e.textContent)`))
		if err != nil || len(marks) != len(profseries.Gauges) {
			t.Errorf("release marks on the charts: %q (%v); want one per chart", marks, err)
		}
		for _, m := range marks {
			if m != "1.0 → 1.1" {
				t.Errorf("a chart marks %q where 1.1 began", m)
			}
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("a.version-vs-previous")), chromedp.WaitVisible(chromedp.CSS("table.diff"))); err != nil {
			t.Fatal(err)
		}
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(loc)
		if q := u.Query(); !strings.Contains(q.Get("target"), `version="1.1"`) || !strings.Contains(q.Get("base_target"), `version="1.0"`) {
			t.Errorf("this version vs the previous opened %s; want 1.1 against 1.0", loc)
		}
		if n := count(t, ctx, "table.diff tbody tr"); n < 10 {
			t.Errorf("the comparison lists %d functions", n)
		}
		boxes, err := chromedp.Run(ctx, chromedp.Poll[int](`(() => {
			const d = document.querySelector("iframe.flame").contentDocument;
			const n = d ? d.querySelectorAll("#stack-chart .boxtext").length : 0;
			return n > 0 ? n : null;
		})()`, chromedp.WithPollingTimeout(20*time.Second)))
		screenshot(t, ctx, art, "service-compare")
		if err != nil || boxes == 0 {
			t.Errorf("the difference's flame graph has no boxes (%v)", err)
		}
	})

	t.Run("zoom", func(t *testing.T) {
		ctx, cancel := step(ctx)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Navigate(worker), chromedp.WaitVisible(chromedp.CSS("svg.timechart"))); err != nil {
			t.Fatal(err)
		}
		// Drag across the middle of the first chart.
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
			const svg = document.querySelector("svg.timechart"), b = svg.getBoundingClientRect();
			const at = (type, f) => svg.dispatchEvent(new PointerEvent(type, {clientX: b.left + f * b.width, clientY: b.top + b.height / 2, pointerId: 1, bubbles: true}));
			// After this evaluation returns: the drag navigates.
			setTimeout(() => { at("pointerdown", 0.5); at("pointermove", 0.75); at("pointerup", 0.75); }, 0);
			return true;
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		// The zoomed page's form has the range's end filled in.
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`form.service input[name=to]:not([value=""])`))); err != nil {
			t.Fatalf("dragging across the chart did not zoom: %v", err)
		}
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(loc)
		from, err1 := time.Parse(time.RFC3339, u.Query().Get("from"))
		to, err2 := time.Parse(time.RFC3339, u.Query().Get("to"))
		if err1 != nil || err2 != nil || to.Sub(from) < 10*time.Minute || to.Sub(from) > 20*time.Minute {
			t.Errorf("dragging over a quarter of an hour's chart opened %s; want a range of about 15 minutes", loc)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		ctx, cancel := flow(ctx)
		defer cancel()
		typed := `{job="worker"`
		err := chromedp.Do(ctx, chromedp.Navigate(worker), chromedp.SetValue(chromedp.CSS(`form.service input[name=target]`), typed),
			chromedp.Submit(chromedp.CSS(`form.service input[name=target]`)), chromedp.WaitVisible(chromedp.CSS("p.problem")))
		if err != nil {
			t.Fatal(err)
		}
		kept, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`form.service input[name=target]`)))
		if err != nil {
			t.Fatal(err)
		}
		problem := text(t, ctx, "p.problem")
		screenshot(t, ctx, art, "service-bad-selector")
		if kept != typed || !strings.Contains(problem, "'}'") {
			t.Errorf("a selector missing its brace: the form keeps %q and says %q; want %q kept and the missing brace named", kept, problem, typed)
		}
		// A range without data links the nearest one that has some.
		old := ts.URL + "/services/view?" + url.Values{"target": {`{job="worker"}`}, "from": {"2020-01-01 10:00"}, "to": {"2020-01-01 11:00"}}.Encode()
		if err := chromedp.Do(ctx, chromedp.Navigate(old), chromedp.Click(chromedp.CSS("a.nearest")), chromedp.WaitVisible(chromedp.CSS("table.top"))); err != nil {
			t.Fatalf("a range without data does not link one with data: %v", err)
		}
	})
}

// flow bounds a subtest that opens several pages, each building a flame
// graph and running an analysis: a step for each.
func flow(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 3*time.Minute)
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string { return "`" + strings.ReplaceAll(s, "`", "\\`") + "`" }
