package server

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserDeploys opens the home page in Chromium after a deploy of
// leftpad was scraped: the deploys section shows it with the functions
// whose share changed, and its link opens the service's deploys page with
// the deploy's table of changes.
func TestBrowserDeploys(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a browser")
	}
	ctx := newBrowser(t)
	st, _ := openSQLiteBackend(t)
	storeDeploy(t, st)
	ts := startServer(t, Config{Store: st, NoCompiler: true})
	art := artifactsDir(t)

	ctx, cancel := step(ctx)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("section.home-deploys .deploy h3 a"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, art, "home-deploys")
	section, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("section.home-deploys")))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("section.home-deploys table.deploy-changes tr")].map(r => r.innerText)`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(section, ": 1 → 2") || len(rows) == 0 || !strings.Contains(rows[0], "% → ") || !strings.Contains(rows[0], " pts") {
		t.Errorf("the home page's deploys section does not show the deploy from 1 to 2 with its changes (share before → after):\n%s\nrows: %q", section, rows)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("section.home-deploys .deploy h3 a")), chromedp.WaitVisible(chromedp.CSS("table.deploy-changes"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, art, "deploys")
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if want := `{job="leftpad", service="left pad", team="pay-ments ✓"}`; err != nil || u.Path != "/deploys" || u.Query().Get("target") != want {
		t.Errorf("the deploy's link opened %s, want /deploys of %s", loc, want)
	}
	heading, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("section.deploy h2")))
	if err != nil || !strings.HasSuffix(heading, ": 1 → 2") {
		t.Errorf("the deploys page shows %q (%v), want the deploy from 1 to 2", heading, err)
	}
	fns, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.deploy-changes td.function")].map(e => e.innerText)`))
	if err != nil || len(fns) <= len(rows) || !strings.Contains(strings.Join(fns, "\n"), "examples/leftpad.") {
		t.Errorf("the deploys page lists %q (%v), want more changes than the home page's %d, a leftpad function among them", fns, err, len(rows))
	}
}
