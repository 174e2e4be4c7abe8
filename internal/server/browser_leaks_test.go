package server

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profseries"
)

// leakySnapshots is how many goroutine and heap snapshots of the leftpad
// example's leaky mode testdata/leaky holds, 10 s apart
// (internal/profseries/testdata/capture.sh, MODE=leaky SNAPSHOTS=1).
const leakySnapshots = 12

// storeLeakySnapshots stores the recorded snapshots of the leaky leftpad
// as one process's, 10 s apart and ending a minute ago, and returns when
// the first was taken.
func storeLeakySnapshots(t *testing.T, st interface {
	Append(context.Context, *profseries.Scrape) error
}) time.Time {
	t.Helper()
	start := time.Now().Add(-time.Minute - leakySnapshots*10*time.Second).Truncate(time.Second)
	for i := range leakySnapshots {
		at := start.Add(time.Duration(i) * 10 * time.Second)
		for _, typ := range []string{profseries.Goroutine, profseries.Heap} {
			data, err := os.ReadFile(filepath.Join("testdata", "leaky", fmt.Sprintf("%s-%02d.pb.gz", typ, i+1)))
			if err != nil {
				t.Fatal(err)
			}
			p, err := profile.ParseData(data)
			if err != nil {
				t.Fatal(err)
			}
			s := &profseries.Scrape{Target: scrapedTarget, Type: typ, Start: at, End: at, Process: profseries.Process{Generation: 1}, Profile: p}
			if err := st.Append(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
	}
	return start
}

// TestBrowserLeaks opens the leaks page in Chromium on two minutes of real
// snapshots of the leaky leftpad: it names the goroutines started at
// awaitAudit with their rate, draws their level in each snapshot with the
// trend fitted, and links the service page of those snapshots with the
// series of the function they wait in; a selector typed wrong is kept in
// the form with what is wrong with it.
func TestBrowserLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a browser")
	}
	ctx := newBrowser(t)
	rec := recordCSP(t, ctx)
	t.Cleanup(func() {
		if v := rec.take(); len(v) > 0 {
			t.Errorf("the browser refused what the leaks page does: %q", v)
		}
	})
	st, _ := openSQLiteBackend(t)
	start := storeLeakySnapshots(t, st)
	ts := startServer(t, Config{Store: st, NoCompiler: true})
	art := artifactsDir(t)

	ctx, cancel := flow(ctx)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/leaks"), chromedp.WaitVisible(chromedp.CSS("ol.leaks li.leak"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, art, "leaks")
	type leakCard struct {
		Sentence, Evidence, Wait, Caption string
		Points, Fit                       int
		Service                           string
	}
	cards, err := chromedp.Run(ctx, chromedp.Evaluate[[]leakCard](`[...document.querySelectorAll("ol.leaks li.leak")].map(li => ({
		Sentence: li.querySelector("strong").innerText,
		Evidence: li.querySelector("p.evidence").innerText,
		Wait: li.querySelector("p.wait")?.innerText ?? "",
		Caption: li.querySelector("figure.timechart figcaption")?.innerText ?? "",
		Points: (li.querySelector("svg.timechart .line polyline")?.getAttribute("points") ?? "").trim().split(/\s+/).filter(s => s).length,
		Fit: li.querySelectorAll("svg.timechart polyline.fit").length,
		Service: li.querySelector("a.service")?.href ?? "",
	}))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cards) == 0 {
		t.Fatal("no leak named")
	}
	// The goroutines the leaky mode parks forever come first, the
	// fastest growing, with their rate, where they wait, and the
	// snapshots they were judged on drawn.
	g := cards[0]
	if !strings.HasPrefix(g.Sentence, "goroutines started at github.com/perfscope/perfscope/examples/leftpad.awaitAudit (leak.go:") ||
		!strings.Contains(g.Sentence, " per hour for 1m50s") {
		t.Errorf("the first leak says %q; want the goroutines started at awaitAudit, with their rate over the 1m50s judged", g.Sentence)
	}
	if !strings.HasPrefix(g.Evidence, "1684 → 27k over 12 snapshots") || !strings.HasPrefix(g.Wait, "waiting in runtime.chanrecv1 at ") {
		t.Errorf("the goroutines' evidence says %q and %q; want 1684 → 27k over the 12 snapshots, waiting in a channel receive", g.Evidence, g.Wait)
	}
	if g.Points != leakySnapshots || g.Fit != 1 || !strings.Contains(g.Caption, "in each snapshot judged") || !strings.Contains(g.Caption, "latest 27k") {
		t.Errorf("the goroutines' chart has %d points and %d fitted lines, captioned %q; want the %d snapshots' levels, the trend and the latest level", g.Points, g.Fit, g.Caption, leakySnapshots)
	}
	var heap, records bool
	for _, c := range cards[1:] {
		heap = heap || strings.HasPrefix(c.Sentence, "heap in use allocated at github.com/perfscope/perfscope/examples/leftpad.(*auditor).request (leak.go:")
		// The parked goroutines' sudogs were allocated in a batch by a
		// connection's goroutine waiting on a condition; they are
		// named as the runtime's records of waiting goroutines, not
		// after the connection's goroutine.
		records = records || strings.HasPrefix(c.Sentence, "heap in use for waiting goroutines' records (sudogs), allocated by the runtime at sync.runtime_notifyListWait (sema.go:")
		if strings.Contains(c.Sentence, "(*conn).serve") {
			t.Errorf("a leak named after the goroutine that happened to allocate: %q", c.Sentence)
		}
	}
	if !heap || !records {
		t.Errorf("the heap the parked goroutines hold, allocated in (*auditor).request (%v) and as the runtime's records of waiting goroutines (%v), is not named: %+v",
			heap, records, cards[1:])
	}
	judged, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.judged tbody tr")].map(r => r.innerText)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(judged) != 2 || !strings.Contains(judged[0], "goroutine\t12\t12\t") || !strings.Contains(judged[1], "heap\t12\t12\t") {
		t.Errorf("the series judged are %q; want leftpad's goroutine and heap series, each judged on its 12 snapshots", judged)
	}

	// The leak's link opens its snapshots on the service page, with the
	// series of the function its goroutines wait in.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("ol.leaks li.leak a.service")), chromedp.WaitVisible(chromedp.CSS("section.function svg.timechart"))); err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	from, err1 := time.Parse(time.RFC3339, q.Get("from"))
	to, err2 := time.Parse(time.RFC3339, q.Get("to"))
	if u.Path != "/services/view" || q.Get("type") != profseries.Goroutine || q.Get("fn") != "github.com/perfscope/perfscope/examples/leftpad.awaitAudit" ||
		err1 != nil || err2 != nil || !from.Equal(start) || !to.After(start.Add((leakySnapshots-1)*10*time.Second)) {
		t.Errorf("the leak's link opened %s; want the goroutine profiles of its 12 snapshots from %s, with awaitAudit's series", loc, start.Format(time.RFC3339))
	}

	// A selector typed wrong is kept, with what is wrong with it.
	typed := `{job="leftpad"`
	err = chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/leaks"), chromedp.SetValue(chromedp.CSS(`form.leaks input[name=target]`), typed),
		chromedp.Submit(chromedp.CSS(`form.leaks input[name=target]`)), chromedp.WaitVisible(chromedp.CSS("p.error")))
	if err != nil {
		t.Fatal(err)
	}
	kept, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`form.leaks input[name=target]`)))
	if err != nil {
		t.Fatal(err)
	}
	problem, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("p.error")))
	if err != nil {
		t.Fatal(err)
	}
	if kept != typed || !strings.Contains(problem, "'}'") {
		t.Errorf("a selector missing its brace: the form keeps %q and says %q; want %q kept and the missing brace named", kept, problem, typed)
	}
}
