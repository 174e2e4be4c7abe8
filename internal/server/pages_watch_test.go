package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestWatchPagesBadInput: each kind of bad query of the watch pages gets
// its status and one line saying what was wrong, with the form keeping
// what was typed; the site's own 404 for what does not exist.
func TestWatchPagesBadInput(t *testing.T) {
	st, _ := openSQLiteBackend(t)
	storeWatchScrapes(t, st)
	ts := startServer(t, Config{Store: st, NoCompiler: true})
	view := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return "/services/view?" + v.Encode()
	}
	for _, c := range []struct {
		path string
		code int
		want []string
	}{
		{view("target", `{job="worker"`), http.StatusBadRequest, []string{`value="{job=&#34;worker&#34;"`, "want &#39;}&#39; to close the selector"}},
		{view("target", `{job="nobody"}`), http.StatusNotFound, []string{`value="{job=&#34;nobody&#34;}"`, "No stored target matches"}},
		{view("target", `{job="worker"}`, "type", "mutex"), http.StatusNotFound, []string{"No mutex profiles are stored"}},
		{view("target", `{job="worker"}`, "type", "cpuu"), http.StatusBadRequest, []string{`type &#34;cpuu&#34;`}},
		{view("target", `{job="worker"}`, "from", "yesterdayish"), http.StatusBadRequest, []string{`value="yesterdayish"`, "range: from:"}},
		{view("target", `{job="worker"}`, "from", "1h", "to", "2h"), http.StatusBadRequest, []string{"empty time range"}},
		{view("target", `{job="worker"}`, "sort", "size"), http.StatusBadRequest, []string{"sort by flat, cum or name"}},
		{view(), http.StatusBadRequest, []string{"target: give a label selector"}},
		{"/services?since=soon", http.StatusBadRequest, []string{"since &#34;soon&#34;"}},
		{view("target", `{job="worker"}`, "from", "2020-01-01 10:00", "to", "2020-01-01 11:00"), http.StatusOK, []string{"were scraped from", `class="nearest"`}},
		{view("target", `{job="worker"}`), http.StatusOK, []string{`<iframe class="flame"`, "&amp;query=%7Bjob%3D%22worker%22%7D&amp;to=", "Top functions"}},
		{view("target", `{job="worker"}`, "fn", "main.nothing"), http.StatusOK, []string{"appears in none of the"}},
		{"/services/pprof/flamegraph?" + url.Values{"target": {`{job="worker"}`}, "from": {"2020-01-01 10:00"}, "to": {"2020-01-01 11:00"}}.Encode(), http.StatusNotFound, []string{"no profiles stored"}},
		{"/services/pprof/nosuchview?" + url.Values{"target": {`{job="worker"}`}}.Encode(), http.StatusNotFound, []string{"pprof has no view"}},
	} {
		code, body := ts.do(t, http.MethodGet, c.path, "", "", nil)
		if code != c.code {
			t.Errorf("%s: %d, want %d", c.path, code, c.code)
		}
		for _, w := range c.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("%s: the page does not say %q", c.path, w)
			}
		}
		if strings.Contains(string(body), "goroutine ") && strings.Contains(string(body), "panic") {
			t.Errorf("%s: a stack trace", c.path)
		}
	}
}

// TestServicesEmpty: with nothing scraped, the services page says how to
// start, and the menu links it.
func TestServicesEmpty(t *testing.T) {
	ts := startServer(t, Config{})
	code, body := ts.do(t, http.MethodGet, "/services", "", "", nil)
	if code != http.StatusOK || !strings.Contains(string(body), "No scraped target yet") || !strings.Contains(string(body), `<a href="/services" class="here">Services</a>`) {
		t.Errorf("%d:\n%s", code, body)
	}
}
