package server

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"mime"
	"net/http"
	"regexp"
	"strings"
)

// The dashboard's pages carry no inline script, style or event handler: their
// one style sheet is /static/style.css and their charts are SVG drawn by the
// server. So every answer but pprof's views gets pagePolicy, which allows
// nothing inline. The run page frames pprof's flame graph (frame-src 'self');
// nothing may frame the dashboard (frame-ancestors 'none').
const pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// pprofHandlerHash allows the one inline event handler pprof's web UI
// writes, on the source view's listings (which toggles disassembly), by the
// hash of its text: 'unsafe-hashes' allows exactly that handler.
var pprofHandlerHash = func() string {
	sum := sha256.Sum256([]byte("pprof_toggle_asm(event)"))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// pprofPolicy is the policy of an HTML page of pprof's web UI: its scripts
// and styles are inline (<script> and <style> blocks, the page's data among
// them), so each page gets a nonce of its own on the blocks pprof wrote,
// and its one inline handler is allowed by hash. Nothing else inline runs:
// a handler attribute that markup from a profile could add is refused. The
// run page frames the flame graph, so the dashboard itself may frame these
// views (frame-ancestors 'self').
func pprofPolicy(nonce string) string {
	return "default-src 'none'; script-src 'self' 'nonce-" + nonce + "' 'unsafe-hashes' " + pprofHandlerHash +
		"; style-src 'self' 'nonce-" + nonce + "'; img-src 'self' data:; connect-src 'self'; " +
		"form-action 'self'; base-uri 'none'; frame-ancestors 'self'"
}

// secure sets the browser's security headers on every answer: the content
// security policy (pagePolicy, or pprofPolicy for pprof's pages), no
// content type sniffing, no framing by other sites, and no referrer sent to
// other sites (the dashboard's addresses name runs, commits and benchmarks).
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", pagePolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "same-origin")
		if !isPprofPath(r.URL.EscapedPath()) {
			h.ServeHTTP(w, r)
			return
		}
		hd.Set("X-Frame-Options", "SAMEORIGIN")
		pw := &pprofWriter{ResponseWriter: w}
		h.ServeHTTP(pw, r)
		pw.finish()
	})
}

// isPprofPath reports whether path (escaped) is under one of pprof's web
// UIs: /runs/ID/pprof/KIND/..., /diff/BASE/HEAD/KIND/... (/diff/BASE/HEAD/KIND
// itself is the dashboard's page framing the diff),
// /compare/instructions/BASE/HEAD/PACKAGE/NAME/... (likewise) or
// /services/pprof/....
func isPprofPath(path string) bool {
	if strings.HasPrefix(path, "/services/pprof/") {
		return true
	}
	if strings.HasPrefix(path, "/compare/instructions/") {
		return len(strings.SplitN(path, "/", 8)) == 8
	}
	parts := strings.SplitN(path, "/", 6) // "", "runs", ID, "pprof", ...
	if len(parts) == 6 && parts[1] == "diff" {
		return true
	}
	return len(parts) >= 4 && parts[1] == "runs" && parts[3] == "pprof"
}

// A pprofWriter holds back an HTML answer of pprof's web UI to give its
// script and style blocks a nonce and the answer pprofPolicy with it. Other
// answers (a profile download, a redirect) pass through as they are.
type pprofWriter struct {
	http.ResponseWriter
	code    int
	started bool // the answer's kind is known
	held    bool // the answer is HTML, held in body
	body    bytes.Buffer
}

func (w *pprofWriter) start(code int) {
	if w.started {
		return
	}
	w.started = true
	ct, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
	if ct == "text/html" {
		w.held, w.code = true, code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *pprofWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.start(code)
}

func (w *pprofWriter) Write(p []byte) (int, error) {
	if !w.started {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", http.DetectContentType(p))
		}
		w.start(http.StatusOK)
	}
	if w.held {
		return w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *pprofWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish sends a held answer with its nonce.
func (w *pprofWriter) finish() {
	if !w.held {
		return
	}
	nonce := newNonce()
	w.Header().Set("Content-Security-Policy", pprofPolicy(nonce))
	w.Header().Del("Content-Length")
	w.ResponseWriter.WriteHeader(w.code)
	_, _ = w.ResponseWriter.Write(addNonce(w.body.Bytes(), nonce))
}

// inlineBlock matches the start of the <script> and <style> elements pprof's
// templates write: lower case, followed by '>' or attributes.
var inlineBlock = regexp.MustCompile(`<(script|style)([\s>])`)

// addNonce gives every <script> and <style> element of page the nonce.
// pprof's pages are html/template output, whose escaping keeps a profile's
// names from ever reading as a tag, so the elements it finds are pprof's.
func addNonce(page []byte, nonce string) []byte {
	return inlineBlock.ReplaceAll(page, []byte(`<$1 nonce="`+nonce+`"$2`))
}

// newNonce returns 128 random bits, base64-encoded.
func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return base64.StdEncoding.EncodeToString(b[:])
}
