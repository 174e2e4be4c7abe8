package server

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestCompareRunsGuardRails opens run comparisons in Chromium: two runs of
// the same endpoint are judged metric by metric, with both targets shown;
// a healthy run against one whose every request failed, or runs of two
// different services, are said to be not comparable and judged nowhere;
// the menus name runs by endpoint and time, not by id alone; and the diff
// flame graph compares shares, with the way back.
func TestCompareRunsGuardRails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a browser")
	}
	ctx := newBrowser(t)
	ts := startServer(t, Config{NoCompiler: true})
	pushDashboardFixtures(t, ts)
	pushFindingsRun(t, ts, "txsummary-naive")

	judged := func(t *testing.T) []string {
		t.Helper()
		return evaluate[[]string](t, ctx, `[...document.querySelectorAll("table.sidebyside tbody tr")].filter(r => r.className !== "" || r.querySelector("td.verdict").innerText !== "" || r.querySelector("td.delta").innerText !== "")
			.map(r => r.dataset.metric + " " + r.className + " " + r.querySelector("td.delta").innerText)`)
	}

	t.Run("same endpoint", func(t *testing.T) {
		main := visit(t, ctx, ts.URL, "/compare?base_run=leftpad-naive&head_run=leftpad-optimized")
		if strings.Contains(main, "Not comparable") {
			t.Errorf("two healthy runs of one endpoint are called not comparable:\n%s", main)
		}
		targets := evaluate[[]string](t, ctx, `[...document.querySelectorAll("table.sides td.target")].map(e => e.innerText)`)
		if len(targets) != 2 || !strings.Contains(targets[0], "/v1/leftpad/") || !strings.Contains(targets[1], "/v1/leftpad/") {
			t.Errorf("the comparison shows targets %q; want both runs' targets", targets)
		}
		// One notation per column: ratios in the metrics' table, points
		// in the shares' table.
		changes := evaluate[[]string](t, ctx, `[...document.querySelectorAll("table.sidebyside:not(.shares) td.delta")].map(e => e.innerText)`)
		for _, c := range changes {
			if c != "" && !strings.HasSuffix(c, "×") {
				t.Errorf("the change column mixes notations: %q", changes)
				break
			}
		}
		points := evaluate[[]string](t, ctx, `[...document.querySelectorAll("table.sidebyside.shares td.delta")].map(e => e.innerText)`)
		for _, c := range points {
			if !strings.HasSuffix(c, "pts") {
				t.Errorf("the shares' change column reads %q; want percentage points", points)
				break
			}
		}
		if len(judged(t)) == 0 {
			t.Error("no metric of two comparable runs is judged")
		}
	})

	for _, tc := range []struct{ name, base, head, why string }{
		{"healthy against failed", "leftpad-naive", "leftpad-bad-path", "404"},
		{"different services", "leftpad-naive", "txsummary-naive", "different endpoints"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			main := visit(t, ctx, ts.URL, "/compare?base_run="+tc.base+"&head_run="+tc.head)
			if !strings.Contains(main, "Not comparable") || !strings.Contains(main, tc.why) {
				t.Errorf("comparing %s with %s does not say they are not comparable (%s):\n%s", tc.base, tc.head, tc.why, main)
			}
			if j := judged(t); len(j) > 0 {
				t.Errorf("comparing %s with %s still judges %q", tc.base, tc.head, j)
			}
			if strings.Contains(main, " 0×") {
				t.Errorf("the comparison prints a ratio of 0×:\n%s", main)
			}
		})
	}

	t.Run("menus", func(t *testing.T) {
		visit(t, ctx, ts.URL, "/compare")
		options := evaluate[[]string](t, ctx, `[...document.querySelectorAll("select[name=base_run] option")].slice(1).map(o => o.innerText)`)
		if len(options) != 4 {
			t.Fatalf("the base run menu offers %q; want the 4 runs", options)
		}
		for _, o := range options {
			if !strings.Contains(o, "/v1/leftpad") && !strings.Contains(o, "/summary") || !strings.Contains(o, "20") {
				t.Errorf("the run menu names a run %q; want its endpoint and time", o)
			}
		}
	})

	t.Run("diff", func(t *testing.T) {
		visit(t, ctx, ts.URL, "/compare?base_run=leftpad-naive&head_run=leftpad-optimized")
		dctx, cancel := step(ctx)
		defer cancel()
		if err := chromedp.Do(dctx, chromedp.Click(chromedp.CSS(`a.diff`)), chromedp.WaitVisible(chromedp.CSS("iframe.flame"))); err != nil {
			t.Fatal(err)
		}
		back := evaluate[string](t, ctx, `document.querySelector("a.back").getAttribute("href")`)
		if back != "/compare?base_run=leftpad-naive&head_run=leftpad-optimized" {
			t.Errorf("the diff's way back is %q", back)
		}
		// The root of a normalized diff goes from 100% of the total to
		// 100%, not to the head's CPU over the base's (the optimized run
		// served four times the requests in the same time).
		root, err := chromedp.Run(dctx, chromedp.Poll[string](`(() => {
			const d = document.querySelector("iframe.flame").contentDocument;
			const box = d && [...d.querySelectorAll("#stack-chart .boxtext")].find(e => e.innerText === "root");
			if (!box) return null;
			box.parentElement.dispatchEvent(new MouseEvent("mouseenter"));
			return d.getElementById("current-details-right").innerText;
		})()`, chromedp.WithPollingTimeout(20*time.Second)))
		if err != nil || strings.Count(root, "(100%)") != 2 {
			t.Errorf("the diff's root reads %q (%v); want 100%% of the total on both sides", root, err)
		}
	})
}
