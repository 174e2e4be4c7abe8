package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// paint times, in headless Chromium as the dashboard's browser tests drive
// it, the 24 h flame graph of one target painted: from navigating to the
// service page of the range until the framed flame graph shows boxes, and
// from navigating to the flame graph's own address until it does. n times
// each; the median and the slowest are printed.
func paint(ctx context.Context, base string, f fleet, n int, tmp string) error {
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		p, err := exec.LookPath("chromium")
		if err != nil {
			return fmt.Errorf("no Chromium (/usr/bin/chromium or chromium on PATH)")
		}
		chromium = p
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(tmp, "chromium")), chromedp.WindowSize(1440, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(bctx); err != nil {
		return fmt.Errorf("start %s: %w", chromium, err)
	}
	view := base + "/services/view?" + url.Values{"target": {`{instance="10.1.0.0:6060"}`}, "from": {"24h"}}.Encode()
	src, err := flameOf(ctx, view)
	if err != nil {
		return err
	}
	const framed = `(() => { const f = document.querySelector("iframe.flame"); const d = f && f.contentDocument;
		return !!d && d.querySelectorAll("#stack-chart .boxtext").length > 0; })()`
	const own = `document.querySelectorAll("#stack-chart .boxtext").length > 0`
	loads := []string{loadavg()}
	for _, m := range []struct{ name, url, poll string }{
		{"service page 24h, flame graph framed", view, framed},
		{"flame graph 24h alone", base + src, own},
	} {
		var ts []time.Duration
		for range n {
			sctx, stop := context.WithTimeout(bctx, time.Minute)
			err := chromedp.Do(sctx, chromedp.Navigate("about:blank"))
			t0 := time.Now()
			if err == nil {
				err = chromedp.Do(sctx, chromedp.Navigate(m.url))
			}
			for err == nil {
				_, err = chromedp.Run(sctx, chromedp.Poll[bool](m.poll, chromedp.WithPollingInterval(10*time.Millisecond)))
				// A page that replaces its document while it loads
				// (pprof's does) takes the poll's context with it: poll
				// the new one.
				if err == nil || !strings.Contains(err.Error(), "Cannot find context with specified id") || sctx.Err() != nil {
					break
				}
				err = nil
			}
			d := time.Since(t0)
			stop()
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			ts = append(ts, d)
		}
		slices.Sort(ts)
		fmt.Printf("| Chromium: %s painted | %d | median %s | slowest %s | %s |\n", m.name, n, ms(ts[len(ts)/2]), ms(ts[len(ts)-1]), map[bool]string{true: "yes", false: "**no**"}[ts[len(ts)/2] < time.Second])
	}
	loads = append(loads, loadavg())
	fmt.Printf("load average (1 min) before and after: %v\n", loads)
	return nil
}
