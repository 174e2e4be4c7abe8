package server

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/perfscope/perfscope/internal/gitstate"
)

// dashboardFixtures holds what scripts/screenshots.sh shows: ten commits of
// testdata/benchmod's benchmarks (Work's bytes triple at commit 5, and at
// commit 8 Work's shrink while Copy's grow fourfold) and three runs of the
// leftpad example (naive, optimized, and one whose every request failed).
const dashboardFixtures = "testdata/dashboard"

// pushDashboardFixtures uploads the fixtures to ts, commit i made i hours
// after the first, and returns the commits in order.
func pushDashboardFixtures(t *testing.T, ts *testServer) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dashboardFixtures, "bench", "commit*.txt"))
	if err != nil || len(files) != 10 {
		t.Fatalf("bench fixtures: %v %v", files, err)
	}
	var commits []string
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		commit, ok := strings.CutPrefix(first, "commit: ")
		if !ok {
			t.Fatalf("%s does not start with its commit", f)
		}
		ts.pushBench(t, commit, epoch.Add(time.Duration(i)*time.Hour), string(data))
		commits = append(commits, commit)
	}
	for _, id := range []string{"leftpad-naive", "leftpad-optimized", "leftpad-bad-path"} {
		ct, body := multipartRun(t, filepath.Join(dashboardFixtures, "runs", id))
		if code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ct, body); code != http.StatusCreated {
			t.Fatalf("upload run %s = %d %s", id, code, resp)
		}
	}
	return commits
}

// eNotation matches a number printed in e-notation, such as 1.864e+04, as
// Go prints large and small floats with %g: always with a sign, so that a
// commit hash such as 5e12ab is not taken for one.
var eNotation = regexp.MustCompile(`\b\d+(\.\d+)?[eE][+-]\d+\b`)

// visit opens path and returns the text of the page's main part, failing
// the test when any number on it is printed in e-notation.
func visit(t *testing.T, ctx context.Context, base, path string) string {
	t.Helper()
	ctx, cancel := step(ctx)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+path), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	main, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if m := eNotation.FindString(main); m != "" {
		t.Errorf("%s prints %q in e-notation:\n%s", path, m, main)
	}
	return main
}

// evaluate runs expression on the current page.
func evaluate[T any](t *testing.T, ctx context.Context, expression string) T {
	t.Helper()
	ctx, cancel := step(ctx)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expression, err)
	}
	return v
}

// TestDashboardPages opens every page of a dashboard filled with the
// committed fixtures in Chromium, and checks what a reader must see on each.
func TestDashboardPages(t *testing.T) {
	ctx := newBrowser(t)
	ts := startServer(t, Config{NoCompiler: true})
	commits := pushDashboardFixtures(t, ts)
	short := func(i int) string { return gitstate.ShortRef(commits[i]) }

	t.Run("home", func(t *testing.T) {
		main := visit(t, ctx, ts.URL, "/")
		if !strings.Contains(main, "What changed") {
			t.Fatalf("the home page is not what changed:\n%s", main)
		}
		// The latest commit first; commit 8 has a regression and an
		// improvement, the regression listed first.
		first := evaluate[string](t, ctx, `document.querySelector(".commit h3 code").innerText`)
		if first != short(9) {
			t.Errorf("the first commit listed is %s; want the latest, %s", first, short(9))
		}
		rows := evaluate[[]string](t, ctx, `[...document.querySelectorAll(".commit")].find(c => c.querySelector("h3 code").innerText === "`+short(8)+`")
			.querySelectorAll("table.changes tr").values().map(r => r.className + " " + r.innerText).toArray()`)
		if len(rows) != 2 || !strings.HasPrefix(rows[0], "worse +300.0%") || !strings.Contains(rows[0], "Copy-") ||
			!strings.HasPrefix(rows[1], "better -33.3%") || !strings.Contains(rows[1], "Work-") {
			t.Errorf("commit %s lists %q; want Copy's B/op regression first, then Work's improvement", short(8), rows)
		}
		health := evaluate[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll("table.runs tbody tr")]
			.map(r => [r.querySelector("td.id").innerText, r.querySelector(".health").className + ": " + r.querySelector(".health").innerText]))`)
		want := map[string]string{"leftpad-bad-path": "health failed: failed load", "leftpad-naive": "health ok: ok", "leftpad-optimized": "health ok: ok"}
		for id, w := range want {
			if health[id] != w {
				t.Errorf("run %s is marked %q; want %q", id, health[id], w)
			}
		}
		for _, number := range []string{"13,279 req/s", "3.47ms", "23µs", "11.5 KiB", "91.9"} {
			if !strings.Contains(main, number) {
				t.Errorf("the naive run's headline numbers lack %s:\n%s", number, main)
			}
		}

		// The regression's link compares its commit with the one before.
		cctx, cancel := step(ctx)
		defer cancel()
		if err := chromedp.Do(cctx, chromedp.Click(chromedp.CSS(`table.changes tr.worse a.cmp`)), chromedp.WaitVisible(chromedp.CSS("table.benchstat"))); err != nil {
			t.Fatal(err)
		}
		loc, err := chromedp.Run(cctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		table, err := chromedp.Run(cctx, chromedp.Text(chromedp.CSS("main")))
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(loc)
		if u.Query().Get("base") != commits[7] || u.Query().Get("head") != commits[8] {
			t.Errorf("the regression opened %s; want the comparison of commits 7 and 8", loc)
		}
		// Written as 'perfscope compare' writes the same table, under
		// its unit: 4.000Ki → 16.000Ki B/op, one scale for the row.
		if !strings.Contains(table, "+300.00%") || !strings.Contains(table, "16.000Ki") {
			t.Errorf("the comparison of commits 7 and 8 does not show Copy's B/op growing fourfold to 16.000Ki, as the CLI writes it:\n%s", table)
		}
		if eNotation.MatchString(table) {
			t.Errorf("the comparison prints e-notation:\n%s", table)
		}
	})

	t.Run("benchmarks", func(t *testing.T) {
		main := visit(t, ctx, ts.URL, "/benchmarks")
		sparks := evaluate[int](t, ctx, `document.querySelectorAll("table.benchmarks svg.spark polyline").length`)
		if sparks != 9 {
			t.Errorf("the list has %d sparklines; want one per metric of 3 benchmarks, 9", sparks)
		}
		latest := evaluate[string](t, ctx, `[...document.querySelectorAll("table.benchmarks tbody.bench")].find(b => b.innerText.startsWith("Work-"))
			.querySelectorAll("tr")[1].querySelector("td.latest").innerText`)
		if latest != "2 KiB" {
			t.Errorf("Work's latest B/op reads %q; want 2 KiB:\n%s", latest, main)
		}
		change := evaluate[string](t, ctx, `(() => {
			const r = [...document.querySelectorAll("table.benchmarks tbody.bench")].find(b => b.innerText.startsWith("Copy-")).querySelectorAll("tr")[1];
			return r.className + ": " + r.querySelector("td.delta").innerText;
		})()`)
		if want := "worse: +300.0% at " + short(8); change != want {
			t.Errorf("Copy's last change of B/op reads %q; want %q", change, want)
		}
	})

	t.Run("trend", func(t *testing.T) {
		name := benchmarkNamed(t, ts, "Work-")
		visit(t, ctx, ts.URL, "/trend?"+url.Values{"package": {"example.com/benchmod"}, "name": {name}, "unit": {"B/op"}}.Encode())
		changes := evaluate[int](t, ctx, `document.querySelectorAll("svg.trend circle.change").length`)
		if changes != 2 {
			t.Errorf("the chart marks %d changes; want 2 (commits 5 and 8)", changes)
		}
		// Every axis label lies inside the chart, the last date too.
		outside := evaluate[[]string](t, ctx, `(() => {
			const svg = document.querySelector("svg.trend").getBoundingClientRect();
			return [...document.querySelectorAll("svg.trend .axis text")].filter(e => {
				const b = e.getBoundingClientRect();
				return b.left < svg.left || b.right > svg.right || b.top < svg.top || b.bottom > svg.bottom;
			}).map(e => e.textContent);
		})()`)
		if len(outside) > 0 {
			t.Errorf("axis labels %q are clipped at the chart's edge", outside)
		}
		ticks := evaluate[[]string](t, ctx, `[...document.querySelectorAll("svg.trend .axis text[text-anchor=end]")].map(e => e.textContent).slice(0, 1)`)
		if len(ticks) == 0 || !strings.HasSuffix(ticks[0], "KiB") {
			t.Errorf("the y axis reads %q; want sizes in KiB", ticks)
		}
	})

	t.Run("runs", func(t *testing.T) {
		main := visit(t, ctx, ts.URL, "/runs")
		for _, id := range []string{"leftpad-naive", "leftpad-optimized", "leftpad-bad-path", "173,777"} {
			if !strings.Contains(main, id) {
				t.Errorf("the run list lacks %s:\n%s", id, main)
			}
		}
	})

	t.Run("run", func(t *testing.T) {
		main := visit(t, ctx, ts.URL, "/runs/leftpad-naive")
		if !strings.Contains(main, "Findings") || !strings.Contains(main, "13,279 req/s") {
			t.Errorf("the run page lacks its findings or throughput:\n%s", main)
		}
		// The routes table and the report's tables (folded under the
		// findings, which are shown once) say what the unlabelled row is
		// and how much CPU went into system calls, as the CLI does.
		analysis := evaluate[string](t, ctx, `document.querySelector("details.analysis").textContent`)
		for _, want := range []string{"own CPU by kind of code: user code", "system calls"} {
			if !strings.Contains(analysis, want) {
				t.Errorf("the run page lacks %q", want)
			}
		}
		unlabelled := "(no route label): CPU not spent inside a request handler"
		if strings.Count(main, unlabelled) != 1 || strings.Count(analysis, unlabelled) != 1 {
			t.Errorf("the run page does not explain the unlabelled route once under its routes and once in the report")
		}
		// pprof's flame graph is drawn in the frame beside the findings.
		pctx, cancel := step(ctx)
		defer cancel()
		boxes, err := chromedp.Run(pctx, chromedp.Poll[int](`(() => {
			const d = document.querySelector("iframe.flame").contentDocument;
			const n = d ? d.querySelectorAll("#stack-chart .boxtext").length : 0;
			return n > 0 ? n : null;
		})()`, chromedp.WithPollingTimeout(20*time.Second)))
		if err != nil || boxes == 0 {
			t.Fatalf("the run page shows no CPU flame graph (%d boxes): %v", boxes, err)
		}
		beside := evaluate[bool](t, ctx, `(() => {
			const f = document.querySelector(".run-findings").getBoundingClientRect(), g = document.querySelector("iframe.flame").getBoundingClientRect();
			return g.left >= f.right && g.top < f.bottom;
		})()`)
		if !beside {
			t.Errorf("the flame graph is not beside the findings")
		}
	})

	t.Run("compare runs", func(t *testing.T) {
		visit(t, ctx, ts.URL, "/compare?base_run=leftpad-naive&head_run=leftpad-optimized")
		rows := evaluate[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll("table.sidebyside tbody tr")]
			.map(r => [r.dataset.metric, r.className + ": " + r.querySelector("td.delta").innerText]))`)
		if rows["throughput_rps"] != "better: 4.43×" || !strings.HasPrefix(rows["alloc_bytes_per_request"], "better: ") {
			t.Errorf("the comparison reads %q; want throughput 4.43× better and fewer bytes per request", rows)
		}
		diffs := evaluate[[]string](t, ctx, `[...document.querySelectorAll("a.diff")].map(a => a.getAttribute("href"))`)
		if len(diffs) == 0 || diffs[0] != "/diff/leftpad-naive/leftpad-optimized/cpu" {
			t.Errorf("the diff flame graph links are %q", diffs)
		}
	})

	t.Run("compare commits", func(t *testing.T) {
		main := visit(t, ctx, ts.URL, "/compare?"+url.Values{"base": {commits[8]}, "head": {commits[9]}}.Encode())
		// Both commits have profiling runs: their diff is offered.
		if !strings.Contains(main, "Profiles of these commits") {
			t.Errorf("the comparison of commits 8 and 9 does not offer their runs' diff:\n%s", main)
		}
	})

	t.Run("diff", func(t *testing.T) {
		dctx, cancel := step(ctx)
		defer cancel()
		if err := chromedp.Do(dctx, chromedp.Navigate(ts.URL+"/diff/leftpad-naive/leftpad-optimized/cpu/flamegraph"),
			chromedp.WaitVisible(chromedp.CSS("#stack-chart .boxtext"))); err != nil {
			t.Fatalf("the diff flame graph does not draw: %v", err)
		}
	})

	for _, tc := range []struct{ name, path, back string }{
		{"unknown run", "/runs/no-such-run", "/runs"},
		{"unknown benchmark", "/trend?package=example.com/benchmod&name=Nope", "/benchmarks"},
		{"unknown page", "/nowhere", "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			main := visit(t, ctx, ts.URL, tc.path)
			back := evaluate[string](t, ctx, `document.querySelector("p.back a").getAttribute("href")`)
			if !strings.HasPrefix(main, "404 Not Found") || back != tc.back {
				t.Errorf("%s shows %q with the way back to %q; want the 404 page leading back to %s", tc.path, main, back, tc.back)
			}
		})
	}

	t.Run("graph without graphviz", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir()) // no dot on it
		main := visit(t, ctx, ts.URL, "/runs/leftpad-naive/pprof/cpu/graph")
		if !strings.HasPrefix(main, "501 Not Implemented") || !strings.Contains(main, "apt-get install graphviz") {
			t.Errorf("the graph view without Graphviz shows:\n%s", main)
		}
	})
}

// TestDashboardEmpty opens the pages of a dashboard with nothing recorded:
// each says so and how to record something.
func TestDashboardEmpty(t *testing.T) {
	ctx := newBrowser(t)
	ts := startServer(t, Config{NoCompiler: true})
	for path, want := range map[string][]string{
		"/":           {"No benchmark results yet", "perfscope bench", "No profiling runs yet", "perfscope profile URL"},
		"/benchmarks": {"No benchmark results match yet", "perfscope push"},
		"/runs":       {"No runs yet", "perfscope push"},
		"/compare":    {"Compare commits", "Compare runs"},
	} {
		main := visit(t, ctx, ts.URL, path)
		for _, w := range want {
			if !strings.Contains(main, w) {
				t.Errorf("the empty %s does not say %q:\n%s", path, w, main)
			}
		}
	}
}
