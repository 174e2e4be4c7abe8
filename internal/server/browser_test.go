package server

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/perfscope/perfscope/internal/testenv"
)

// findChromium returns the Chromium binary the browser tests drive, or ""
// when there is none.
func findChromium() string {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifactsDir is where screenshots are kept: $PERFSCOPE_ARTIFACTS, or a
// temporary directory of the test.
func artifactsDir(t *testing.T) string {
	dir := os.Getenv("PERFSCOPE_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// newBrowser starts a headless Chromium for the test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	chromium := findChromium()
	if chromium == "" {
		testenv.Missing(t, "Chromium not found (/usr/bin/chromium or chromium on PATH)", "install Debian's chromium package")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	// The first action starts the browser, which lives as long as the
	// context of that action: no timeout on this one.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	return ctx
}

// step bounds one browser action, so that a page that never renders fails
// the test instead of hanging it.
func step(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 30*time.Second)
}

// screenshot saves the whole page as name.png among the artifacts.
func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	ctx, cancel := step(ctx)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Error(err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// TestBrowser drives a real Chromium through the dashboard filled with real
// data: benchmarks of testdata/benchmod over eight commits and a profiling
// run of the bundled leftpad example.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and profiles the leftpad example, runs benchmarks and a browser")
	}
	ctx := newBrowser(t)
	ts := startServer(t, Config{})
	pushBenchmodHistory(t, ts)
	runID := pushLeftpadRun(t, ts)
	art := artifactsDir(t)

	t.Run("trend chart", func(t *testing.T) {
		ctx, cancel := step(ctx)
		defer cancel()
		name := benchmarkNamed(t, ts, "Work-")
		trend := ts.URL + "/trend?" + url.Values{"package": {"example.com/benchmod"}, "name": {name}, "unit": {"B/op"}}.Encode()
		if err := chromedp.Do(ctx, chromedp.Navigate(trend), chromedp.WaitVisible(chromedp.CSS("svg.trend"))); err != nil {
			t.Fatal(err)
		}
		points, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg.trend circle").length`))
		if err != nil {
			t.Fatal(err)
		}
		changes, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg.trend circle.change").length`))
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, art, "trend")
		if points != fixtureCommits || changes != 1 {
			t.Fatalf("the chart has %d points and %d change points; want %d and 1", points, changes, fixtureCommits)
		}

		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("svg.trend circle.change")), chromedp.WaitVisible(chromedp.CSS("table.benchstat"))); err != nil {
			t.Fatal(err)
		}
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		table, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
		if err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, art, "compare")
		u, err := url.Parse(loc)
		if err != nil || u.Path != "/compare" || u.Query().Get("base") != fixtureCommit(fixtureChange-1) || u.Query().Get("head") != fixtureCommit(fixtureChange) {
			t.Errorf("the change point opened %s; want the comparison of commits %d and %d", loc, fixtureChange-1, fixtureChange)
		}
		if !strings.Contains(table, "+200.00%") || !strings.Contains(table, name) {
			t.Errorf("the comparison does not show %s's B/op tripling:\n%s", name, table)
		}
	})

	t.Run("flame graph", func(t *testing.T) {
		ctx, cancel := step(ctx)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/runs/"+runID), chromedp.WaitVisible(chromedp.CSS("a.flame"))); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, art, "run")
		err := chromedp.Do(ctx,
			// The allocation profile: main.leftpad allocates a third of the
			// naive service's objects, while its CPU share in a short run
			// can be a handful of samples or none.
			chromedp.Click(chromedp.CSS(`a.flame[href$="/pprof/allocs/flamegraph"]`)),
			chromedp.WaitVisible(chromedp.CSS("#stack-chart .boxtext")),
		)
		if err != nil {
			t.Fatal(err)
		}
		// pprof labels a box with the shortest form of its name that
		// fits ("leftpad"); hovering it shows the full name above the
		// chart, as a person would check it.
		full, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
			const box = [...document.querySelectorAll("#stack-chart .boxtext")].find(e => /(^|\.)leftpad$/.test(e.innerText));
			if (!box) return "";
			box.parentElement.dispatchEvent(new MouseEvent("mouseenter"));
			return document.getElementById("current-details-left").innerText;
		})()`, chromedp.WithPollingTimeout(20*time.Second)))
		screenshot(t, ctx, art, "flamegraph")
		if err != nil || !strings.HasPrefix(full, "github.com/perfscope/perfscope/examples/leftpad.leftpad") {
			boxes, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#stack-chart .boxtext")].map(e => e.innerText)`))
			t.Fatalf("the flame graph of run %s shows no examples/leftpad.leftpad (%q, %v); its boxes: %q", runID, full, err, boxes)
		}
	})

	t.Run("not found", func(t *testing.T) {
		ctx, cancel := step(ctx)
		defer cancel()
		err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/runs/no-such-run"))
		heading, err2 := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
		if err != nil || err2 != nil || heading != "404 Not Found" {
			t.Errorf("an unknown run shows %q (%v, %v); want a 404 page", heading, err, err2)
		}
	})
}
