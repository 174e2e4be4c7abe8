package server

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// linkAttr finds the links of a page: its anchors', frames' and
// stylesheets' addresses.
var linkAttr = regexp.MustCompile(`(?:href|src)="([^"]*)"`)

// crawlLimits bound the crawl: a dashboard of a few runs has a few
// hundred addresses, and a link loop must not run the test forever.
const crawlMaxURLs, crawlMaxTime = 1500, 8 * time.Minute

// TestNoBrokenLinks follows every link of the dashboard's own pages from
// the home page, on a store filled with benchmark history and runs of two
// targets (one whose every request failed), and fails on any address that
// answers an error. pprof's views are fetched but not crawled further:
// their menus are drawn by their scripts from the current view.
func TestNoBrokenLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("fetches every page of a filled dashboard")
	}
	ts := startServer(t, Config{NoCompiler: true})
	pushDashboardFixtures(t, ts)
	pushFindingsRun(t, ts, "txsummary-naive")
	ts.waitAnalysed(t, "leftpad-naive", "leftpad-optimized", "leftpad-bad-path", "txsummary-naive")

	origin, _ := url.Parse(ts.URL)
	client := &http.Client{Timeout: 2 * time.Minute,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != origin.Host {
				return http.ErrUseLastResponse
			}
			return nil
		}}
	type link struct{ url, from string }
	queue := []link{{url: ts.URL + "/", from: "(start)"}}
	seen := map[string]bool{ts.URL + "/": true}
	deadline := time.Now().Add(crawlMaxTime)
	var broken []string
	fetched := 0
	for len(queue) > 0 {
		if fetched == crawlMaxURLs || time.Now().After(deadline) {
			t.Fatalf("crawl stopped after %d addresses, %d still queued: links are generated without end", fetched, len(queue))
		}
		l := queue[0]
		queue = queue[1:]
		fetched++
		resp, err := client.Get(l.url)
		if err != nil {
			broken = append(broken, l.url+" (linked from "+l.from+"): "+err.Error())
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode >= 400 {
			line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
			broken = append(broken, l.url+" (linked from "+l.from+"): "+resp.Status+" "+line)
			continue
		}
		u, _ := url.Parse(l.url)
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || strings.Contains(u.Path, "/pprof/") || strings.HasPrefix(u.Path, "/diff/") {
			continue
		}
		for _, m := range linkAttr.FindAllStringSubmatch(string(body), -1) {
			ref, err := u.Parse(html.UnescapeString(m[1]))
			if err != nil || ref.Host != origin.Host || (ref.Scheme != "http" && ref.Scheme != "https") {
				continue
			}
			ref.Fragment = ""
			if s := ref.String(); !seen[s] {
				seen[s] = true
				queue = append(queue, link{url: s, from: u.RequestURI()})
			}
		}
	}
	t.Logf("crawled %d addresses", fetched)
	if fetched < 100 {
		t.Errorf("crawled only %d addresses: the pages lost their links", fetched)
	}
	if len(broken) > 0 {
		t.Errorf("%d of %d addresses are broken:\n%s", len(broken), fetched, strings.Join(broken, "\n"))
	}
}
