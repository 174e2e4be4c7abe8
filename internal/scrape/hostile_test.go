package scrape

import (
	"bytes"
	"compress/gzip"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/testenv"
)

// bomb is a gzip stream inflating to mib MiB of zeros: one member of a
// MiB, repeated (gzip readers read every member).
func bomb(t *testing.T, mib int) []byte {
	t.Helper()
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(member.Bytes(), mib)
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestHostileTargets scrapes a good target beside targets that refuse,
// answer garbage, a gzip bomb or a body without end, or are not there:
// each one's health says why, memory stays bounded, and the good target
// goes on being scraped.
func TestHostileTargets(t *testing.T) {
	good := pprofServer(t)
	bombBody := bomb(t, 256) // 256 MiB inflated, 16 times the scraper's limit
	hostile := map[string]string{
		serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "token required", http.StatusUnauthorized)
		})): "401 Unauthorized",
		serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<!doctype html><html><body>Welcome</body></html>"))
		})): "got an HTML page, not a profile",
		serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"status": "ok"}`))
		})): "answer is not a pprof profile",
		serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write(bombBody)
		})): "profile too large",
		serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			for {
				if _, err := w.Write(chunk); err != nil {
					return // the scraper hung up
				}
			}
		})): "profile too large",
		closedPort(t): "connection refused",
	}
	targets := []string{good}
	for addr := range hostile {
		targets = append(targets, addr)
	}
	m := &memSink{}
	s := New(config(t, "hostile", []string{"goroutine", "heap"}, targets...), m, Options{})
	watch := testenv.WatchMemory()
	start(t, s)
	for addr, want := range hostile {
		eventually(t, addr+" reported", func() bool {
			h, _ := healthOf(s, addr)
			return h.Scrapes >= 2 && strings.Contains(h.LastError, want)
		})
		h, _ := healthOf(s, addr)
		if h.Up || h.Failures < 2 || len(h.Errors) != 2 || strings.Contains(h.LastError, "\n") {
			t.Errorf("%s: health %+v", addr, h)
		}
		t.Logf("%s: %s", want, h.LastError)
	}
	eventually(t, "the good target scraped beside them", func() bool { return len(m.of(good, "goroutine")) >= 5 })
	grew := watch.Stop()
	t.Logf("memory grew by %d MiB", grew>>20)
	if grew > 512<<20 {
		t.Errorf("memory grew by %d MiB reading hostile answers, bounded by the read limits", grew>>20)
	}
	h, _ := healthOf(s, good)
	if !h.Up || h.LastError != "" {
		t.Errorf("good target: %+v", h)
	}
	for addr := range hostile {
		if n := len(m.of(addr, "goroutine")) + len(m.of(addr, "heap")); n != 0 {
			t.Errorf("%s: %d profiles stored", addr, n)
		}
	}
}
