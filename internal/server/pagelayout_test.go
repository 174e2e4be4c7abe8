package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/perfscope/perfscope/internal/run"
)

// TestPagesRead opens the dashboard's pages in Chromium as a reader would,
// on a wide screen, on a phone and in dark mode, and checks that each says
// what it must once and in a form that fits.
func TestPagesRead(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a browser")
	}
	ctx := newBrowser(t)
	ts := startServer(t, Config{NoCompiler: true})
	commits := pushDashboardFixtures(t, ts)
	pushFindingsRun(t, ts, "txsummary-naive")
	dir := makeRunDir(t, "run-interrupted")
	saved, err := run.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	saved.Interrupted = true
	data, _ := json.Marshal(saved)
	if err := os.WriteFile(filepath.Join(dir, run.File), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ts.uploadRunDir(t, dir)
	// One sample per commit, whose times differ by a tenth of a
	// nanosecond: no interval, and ticks finer than the unit is written.
	for i := range 4 {
		ts.pushBench(t, fmt.Sprintf("a1a1a1a%d", i), epoch.Add(time.Duration(i)*time.Minute), benchFixture(1, 1+0.0001*float64(i)))
	}
	ts.waitAnalysed(t, "leftpad-naive")
	viewport := func(t *testing.T, w, h int64) {
		t.Helper()
		if err := browse(ctx, chromedp.EmulateViewport(w, h)); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("run page", func(t *testing.T) {
		viewport(t, 1440, 900)
		main := visit(t, ctx, ts.URL, "/runs/leftpad-naive")
		var report struct {
			Findings []struct {
				Title string   `json:"title"`
				Notes []string `json:"notes"`
			} `json:"findings"`
		}
		ts.getJSON(t, "/api/v1/runs/leftpad-naive/report", &report)
		notes, titles := 0, map[string]int{}
		for _, f := range report.Findings {
			titles[f.Title]++
			notes += len(f.Notes)
		}
		for title, want := range titles {
			if n := strings.Count(main, title); n != want {
				t.Errorf("finding %q is shown %d times; want once per finding, %d", title, n, want)
			}
		}
		if shown := evaluate[int](t, ctx, `document.querySelectorAll("ul.finding-notes li").length`); notes == 0 || shown != notes {
			t.Errorf("the page shows %d notes of the findings' %d", shown, notes)
		}
		overflow := evaluate[[]string](t, ctx, `(() => {
			const box = document.querySelector(".run-findings").getBoundingClientRect();
			return [...document.querySelectorAll(".run-findings *")].filter(e => e.getBoundingClientRect().right > box.right + 1).map(e => e.textContent.slice(0, 80));
		})()`)
		if len(overflow) > 0 {
			t.Errorf("text runs out of the findings' column under the flame graph: %q", overflow)
		}
		if w := evaluate[float64](t, ctx, `document.querySelector("iframe.flame").getBoundingClientRect().width`); w < 750 {
			t.Errorf("on a 1440 px screen the flame graph is %.0f px wide", w)
		}
		if h := evaluate[float64](t, ctx, `document.documentElement.scrollHeight`); h > 4000 {
			t.Errorf("the run page is %.0f px long: a text dump under its cards?", h)
		}
	})

	t.Run("run list", func(t *testing.T) {
		viewport(t, 1440, 900)
		visit(t, ctx, ts.URL, "/runs")
		health := evaluate[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll("table.runs tbody tr")]
			.map(r => [r.querySelector("td.id").innerText, r.querySelector(".health").innerText]))`)
		for id, want := range map[string]string{"run-interrupted": "interrupted", "leftpad-bad-path": "failed load", "leftpad-naive": "ok"} {
			if health[id] != want {
				t.Errorf("run %s is marked %q in the list; want %q", id, health[id], want)
			}
		}
		target := evaluate[string](t, ctx, `[...document.querySelectorAll("table.runs tbody tr")].find(r => r.querySelector("td.id").innerText === "leftpad-naive").querySelector("td.target").innerText`)
		if target != "http://127.0.0.1:18431/v1/leftpad/?str=test&len=50&chr=*" {
			t.Errorf("the list shows the target as %q; want it whole", target)
		}
		visit(t, ctx, ts.URL, "/runs?sort=throughput")
		ids := evaluate[[]string](t, ctx, `[...document.querySelectorAll("table.runs td.id")].map(e => e.innerText)`)
		if len(ids) < 3 || ids[0] != "leftpad-optimized" || ids[1] != "leftpad-bad-path" {
			t.Errorf("sorted by throughput the runs are %q", ids)
		}
		visit(t, ctx, ts.URL, "/runs?q=SUMMARY")
		ids = evaluate[[]string](t, ctx, `[...document.querySelectorAll("table.runs td.id")].map(e => e.innerText)`)
		kept := evaluate[string](t, ctx, `document.querySelector("input[name=q]").value`)
		if !slices.Equal(ids, []string{"txsummary-naive"}) || kept != "SUMMARY" {
			t.Errorf("searching SUMMARY lists %q with %q in the box; want txsummary-naive", ids, kept)
		}
	})

	t.Run("chart", func(t *testing.T) {
		viewport(t, 1280, 900)
		visit(t, ctx, ts.URL, "/trend?package=example.com/fixture&name=Parse-8")
		labels := evaluate[[]string](t, ctx, `[...document.querySelectorAll("svg.trend .axis text")].map(e => e.textContent)`)
		seen := map[string]bool{}
		for _, l := range labels {
			if seen[l] {
				t.Errorf("the chart's axes repeat %q: %q", l, labels)
			}
			seen[l] = true
		}
		legend := evaluate[string](t, ctx, `document.querySelector("figure.chart figcaption").innerText`)
		if n := evaluate[int](t, ctx, `document.querySelectorAll("svg.trend path.band").length`); n != 0 || strings.Contains(legend, "confidence interval") {
			t.Errorf("a chart of one sample per commit draws %d confidence bands, its legend: %s", n, legend)
		}
	})

	t.Run("compare typo", func(t *testing.T) {
		visit(t, ctx, ts.URL, "/compare?base="+commits[0]+"&head=deadbeef")
		head := evaluate[string](t, ctx, `document.querySelector("input[name=head]").value`)
		msg := evaluate[string](t, ctx, `(document.querySelector("p.error") || {innerText: ""}).innerText`)
		if head != "deadbeef" || !strings.Contains(msg, "deadbeef") {
			t.Errorf("a typo in the head commit shows %q in the field and says %q; want the input kept and what was wrong", head, msg)
		}
	})

	t.Run("phone", func(t *testing.T) {
		viewport(t, 390, 844)
		for _, path := range []string{"/", "/runs", "/runs/leftpad-naive", "/compare?base_run=leftpad-naive&head_run=leftpad-optimized", "/benchmarks"} {
			visit(t, ctx, ts.URL, path)
			if w := evaluate[float64](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
				t.Errorf("at 390 px %s lays out %.0f px wide", path, w)
			}
		}
	})

	t.Run("dark", func(t *testing.T) {
		viewport(t, 1280, 900)
		dctx, cancel := step(ctx)
		defer cancel()
		dark := emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}
		if _, err := chromedp.Call(dctx, emulation.SetEmulatedMedia, dark); err != nil {
			t.Fatal(err)
		}
		defer chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		visit(t, ctx, ts.URL, "/")
		bg := evaluate[string](t, ctx, `getComputedStyle(document.body).backgroundColor`)
		if bg == "rgb(255, 255, 255)" || bg == "rgba(0, 0, 0, 0)" {
			t.Errorf("in dark mode the page's background is %s", bg)
		}
	})
}
