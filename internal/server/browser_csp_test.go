package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/perfscope/perfscope/internal/testenv"
)

// cspRecorder collects the Content-Security-Policy violations a browser
// tab reports, two ways: a listener for the securitypolicyviolation event,
// installed in every document and frame before the page's own scripts,
// calls a binding that the test hears; and the browser's log has an entry
// from its "security" source for each refusal.
type cspRecorder struct {
	mu         sync.Mutex
	violations []string
}

// recordCSP starts recording the violations of the tab of ctx.
func recordCSP(t *testing.T, ctx context.Context) *cspRecorder {
	t.Helper()
	rec := &cspRecorder{}
	const binding = "perfscopeCSPViolation"
	err := chromedp.Listen(ctx, func(ev any) {
		var v string
		switch ev := ev.(type) {
		case *runtime.EventBindingCalled:
			if ev.Name == binding {
				v = "event: " + ev.Payload
			}
		case *log.EventEntryAdded:
			if ev.Entry.Source == log.EntrySourceSecurity || strings.Contains(ev.Entry.Text, "Content Security Policy") {
				v = "log: " + ev.Entry.URL + ": " + ev.Entry.Text
			}
		}
		if v != "" {
			rec.mu.Lock()
			rec.violations = append(rec.violations, v)
			rec.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := step(ctx)
	defer cancel()
	if _, err := chromedp.Call(ctx, runtime.AddBinding, runtime.AddBindingParams{Name: binding}); err != nil {
		t.Fatal(err)
	}
	listen := `document.addEventListener("securitypolicyviolation", e => ` + binding + `(JSON.stringify({
		page: e.documentURI, directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample})));`
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: listen}); err != nil {
		t.Fatal(err)
	}
	return rec
}

// take returns the violations recorded since the last take.
func (r *cspRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.violations
	r.violations = nil
	return v
}

// TestBrowserContentSecurityPolicy opens every kind of page in a real
// Chromium, pprof's views included, with their scripts run and their
// inline handlers fired, and checks that the browser refused nothing:
// the policies the server sends allow all the pages do, and the flame
// graphs draw.
func TestBrowserContentSecurityPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a browser")
	}
	ctx := newBrowser(t)
	rec := recordCSP(t, ctx)

	// The recorder hears a violation when there is one.
	strict := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "script-src 'none'")
		fmt.Fprint(w, `<!DOCTYPE html><title>x</title><script>document.title = "ran"</script>`)
	}))
	defer strict.Close()
	if err := browse(ctx, chromedp.Navigate(strict.URL)); err != nil {
		t.Fatal(err)
	}
	if !waitViolations(rec, 1) {
		t.Fatal("an inline script a policy forbids raised no violation the test heard")
	}

	ts := startServer(t, Config{NoCompiler: true})
	for i := range 4 {
		ts.pushBench(t, fmt.Sprintf("c0ffee0%d", i), epoch.Add(time.Duration(i)*time.Hour), benchFixture(6, 1+0.5*float64(i/2)))
	}
	leftpad := pushLeftpadRun(t, ts)
	ts.uploadRunDir(t, makeRunDir(t, "run-base"))
	ts.uploadRunDir(t, makeRunDir(t, "run-head"))

	pprof := "/runs/" + leftpad + "/pprof/cpu/"
	for _, tc := range []struct {
		path string
		// do, when set, waits for what the page draws with its
		// scripts and fires its inline handlers.
		do chromedp.Action[chromedp.Void]
	}{
		{path: "/"},
		{path: "/benchmarks"},
		{path: "/trend?package=example.com/fixture&name=Parse-8"},
		{path: "/compare?base=c0ffee01&head=c0ffee02"},
		{path: "/compare?base_run=run-base&head_run=run-head"},
		{path: "/runs"},
		{path: "/runs/" + leftpad, do: poll(`(() => {
			const f = document.querySelector("iframe.flame");
			return !!f && !!f.contentDocument && f.contentDocument.querySelectorAll("#stack-chart .boxtext").length > 0;
		})()`)},
		{path: pprof + "flamegraph", do: chromedp.Steps(
			chromedp.WaitVisible(chromedp.CSS("#stack-chart .boxtext")),
			// Hover and click a box, as a person reads the graph.
			chromedp.Evaluate[chromedp.Void](`(() => {
				const box = document.querySelector("#stack-chart .boxtext").parentElement;
				box.dispatchEvent(new MouseEvent("mouseenter"));
				box.dispatchEvent(new MouseEvent("click", {bubbles: true}));
			})()`),
		)},
		{path: pprof + "top", do: chromedp.WaitVisible(chromedp.CSS("#toptable tbody tr"))},
		{path: pprof + "source", do: chromedp.Steps(
			chromedp.WaitReady(chromedp.CSS("#content")),
			// pprof's inline onClick handler, allowed by its hash.
			chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("pre").forEach(p => p.click())`),
		)},
		{path: pprof + "peek", do: chromedp.WaitReady(chromedp.CSS("#content"))},
		{path: "/diff/run-base/run-head/allocs/flamegraph", do: chromedp.WaitVisible(chromedp.CSS("#stack-chart"))},
		{path: "/nowhere"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			actions := []chromedp.Action[chromedp.Void]{chromedp.Navigate(ts.URL + tc.path), chromedp.WaitReady(chromedp.CSS("body"))}
			if tc.do != nil {
				actions = append(actions, tc.do)
			}
			if err := browse(ctx, actions...); err != nil {
				t.Fatal(err)
			}
			checkNoViolations(t, rec)
		})
	}

	t.Run("graph", func(t *testing.T) {
		testenv.Tool(t, "dot", "install Debian's graphviz package")
		err := browse(ctx, chromedp.Navigate(ts.URL+pprof+"graph"), chromedp.WaitVisible(chromedp.CSS("#graph svg g.node")))
		if err != nil {
			t.Fatal(err)
		}
		checkNoViolations(t, rec)
	})
}

// browse runs actions within the time one browser step may take.
func browse(ctx context.Context, actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := step(ctx)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// poll waits until the expression is true.
func poll(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(20*time.Second))
}

// waitViolations waits a little for n violations, which the browser
// reports after the page's work; it reports whether they came.
func waitViolations(rec *cspRecorder, n int) bool {
	for range 50 {
		rec.mu.Lock()
		got := len(rec.violations)
		rec.mu.Unlock()
		if got >= n {
			rec.take()
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// checkNoViolations fails the test with the violations recorded so far,
// after giving the browser a moment to report late ones.
func checkNoViolations(t *testing.T, rec *cspRecorder) {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
	if v := rec.take(); len(v) > 0 {
		t.Errorf("the browser refused %d things the page does:\n%s", len(v), strings.Join(v, "\n"))
	}
}
