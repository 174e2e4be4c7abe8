package server

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// get sends a GET without following redirects and returns the answer with
// its body read.
func (ts *testServer) get(t *testing.T, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// uploadRunDir uploads the run directory dir.
func (ts *testServer) uploadRunDir(t *testing.T, dir string) {
	t.Helper()
	ct, body := multipartRun(t, dir)
	if code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ct, body); code != http.StatusCreated {
		t.Fatalf("upload %s = %d %s", dir, code, resp)
	}
}

// TestSecurityHeaders: every kind of answer carries the security headers,
// with the strict policy, except pprof's HTML pages, whose policy allows
// their own inline blocks by a nonce and lets the dashboard frame them.
func TestSecurityHeaders(t *testing.T) {
	ts := startServer(t, Config{NoCompiler: true})
	ts.pushBench(t, "abcd1234", epoch, benchFixture(3, 1))
	ts.uploadRunDir(t, makeRunDir(t, "run-h"))
	remote := []string{"X-Forwarded-For", "203.0.113.7"}

	for _, tc := range []struct {
		name, path string
		header     []string
		code       int
		pprof      bool // a page of pprof's web UI
	}{
		{"page", "/benchmarks", nil, 200, false},
		{"page not found", "/nowhere", nil, 404, false},
		{"API", "/api/v1/commits", nil, 200, false},
		{"API error", "/api/v1/commits/99999999", nil, 404, false},
		{"unauthorized", "/api/v1/commits", remote, 401, false},
		{"style sheet", "/static/style.css", nil, 200, false},
		{"metrics", "/metrics", nil, 200, false},
		{"health", "/healthz", nil, 200, false},
		{"profile", "/api/v1/runs/run-h/profiles/allocs", nil, 200, false},
		{"pprof flame graph", "/runs/run-h/pprof/allocs/flamegraph", nil, 200, true},
		{"pprof top", "/runs/run-h/pprof/allocs/top", nil, 200, true},
		{"pprof source", "/runs/run-h/pprof/allocs/source", nil, 200, true},
		{"pprof diff", "/diff/run-h/run-h/allocs/flamegraph", nil, 200, true},
		{"pprof unknown view", "/runs/run-h/pprof/allocs/nope", nil, 404, true},
		{"pprof root redirect", "/runs/run-h/pprof/allocs", nil, 301, true},
		{"pprof download", "/runs/run-h/pprof/allocs/download", nil, 200, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := ts.get(t, tc.path, tc.header...)
			h := resp.Header
			if resp.StatusCode != tc.code {
				t.Fatalf("GET %s = %d, want %d: %.300s", tc.path, resp.StatusCode, tc.code, body)
			}
			if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", got)
			}
			if got := h.Get("Referrer-Policy"); got != "same-origin" {
				t.Errorf("Referrer-Policy = %q", got)
			}
			csp := h.Get("Content-Security-Policy")
			html := strings.HasPrefix(h.Get("Content-Type"), "text/html")
			switch {
			case tc.pprof && html:
				nonce := checkNonces(t, csp, body)
				if csp != pprofPolicy(nonce) {
					t.Errorf("pprof's page has the policy %q", csp)
				}
				if got := h.Get("X-Frame-Options"); got != "SAMEORIGIN" {
					t.Errorf("X-Frame-Options = %q, want SAMEORIGIN: the run page frames the flame graph", got)
				}
			case tc.pprof:
				if csp != pagePolicy || h.Get("X-Frame-Options") != "SAMEORIGIN" {
					t.Errorf("policy %q, X-Frame-Options %q", csp, h.Get("X-Frame-Options"))
				}
			default:
				if csp != pagePolicy {
					t.Errorf("Content-Security-Policy = %q, want %q", csp, pagePolicy)
				}
				if got := h.Get("X-Frame-Options"); got != "DENY" {
					t.Errorf("X-Frame-Options = %q", got)
				}
			}
		})
	}

	// A nonce is never reused.
	first, _ := ts.get(t, "/runs/run-h/pprof/allocs/flamegraph")
	second, _ := ts.get(t, "/runs/run-h/pprof/allocs/flamegraph")
	if a, b := first.Header.Get("Content-Security-Policy"), second.Header.Get("Content-Security-Policy"); a == b {
		t.Errorf("two answers share the policy %q", a)
	}
}

var (
	noncePattern = regexp.MustCompile(`'nonce-([A-Za-z0-9+/=]+)'`)
	blockPattern = regexp.MustCompile(`<(?:script|style)\b[^>]*>`)
)

// checkNonces checks that the policy csp names a nonce and that every
// script and style element of page carries it; it returns the nonce.
func checkNonces(t *testing.T, csp string, page []byte) string {
	t.Helper()
	m := noncePattern.FindStringSubmatch(csp)
	if m == nil {
		t.Fatalf("pprof's page has no nonce in its policy %q", csp)
	}
	blocks := blockPattern.FindAll(page, -1)
	for _, b := range blocks {
		if !bytes.Contains(b, []byte(` nonce="`+m[1]+`"`)) {
			t.Errorf("%s lacks the nonce %s", b, m[1])
		}
	}
	return m[1]
}

// TestPprofMarkupFromProfile: names in an uploaded profile that look like
// markup stay text in every view of pprof's web UI, so no element of theirs
// gets the page's nonce.
func TestPprofMarkupFromProfile(t *testing.T) {
	ts := startServer(t, Config{NoCompiler: true})
	plain := makeRunDir(t, "plain")
	evil := makeRunDir(t, "evil")
	const markup = `<script>window.pwned=1</script><style>*{}</style><img src=x onerror="pwned=1">`
	path := filepath.Join(evil, "allocs.pb.gz")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range p.Function {
		fn.Name += markup
		fn.SystemName += markup
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ts.uploadRunDir(t, plain)
	ts.uploadRunDir(t, evil)

	views := []string{"flamegraph", "top", "source", "peek"}
	if _, err := exec.LookPath("dot"); err == nil {
		views = append(views, "graph")
	} else {
		t.Log("dot is not installed: the graph view is not checked")
	}
	for _, view := range views {
		_, want := ts.get(t, "/runs/plain/pprof/allocs/"+view)
		resp, got := ts.get(t, "/runs/evil/pprof/allocs/"+view)
		// The source view lists only functions whose files it reads.
		if resp.StatusCode != http.StatusOK || (view != "source" && !bytes.Contains(got, []byte("pwned"))) {
			t.Fatalf("%s of the profile with markup in its names = %d, without the names", view, resp.StatusCode)
		}
		checkNonces(t, resp.Header.Get("Content-Security-Policy"), got)
		if n, m := len(blockPattern.FindAll(got, -1)), len(blockPattern.FindAll(want, -1)); n != m {
			t.Errorf("%s: %d script and style elements with markup in the names, %d without", view, n, m)
		}
		if bytes.Contains(got, []byte("<img src=x")) {
			t.Errorf("%s: an element from the profile's names is in the page", view)
		}
	}
}
