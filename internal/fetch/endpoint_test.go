package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	rpprof "runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfscope/perfscope/expose"
)

// TestEndpointSnapshots fetches every named profile of this process from
// its own net/http/pprof, as a service serves them.
func TestEndpointSnapshots(t *testing.T) {
	srv := serve(t, pprofMux())
	e := mustEndpoint(t, srv.URL+"/debug/pprof", EndpointOptions{}) // the slash is added
	if want := srv.URL + "/debug/pprof/"; e.Base() != want {
		t.Errorf("Base = %q, want %q", e.Base(), want)
	}
	if want := srv.URL + "/debug/pprof/heap"; e.URL("heap") != want {
		t.Errorf("URL(heap) = %q, want %q", e.URL("heap"), want)
	}
	for _, name := range []string{"allocs", "heap", "block", "mutex", "goroutine", "threadcreate"} {
		before := time.Now()
		snap, err := e.Snapshot(t.Context(), name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := snap.Profile.CheckValid(); err != nil {
			t.Errorf("%s: invalid: %v", name, err)
		}
		if snap.At.Before(before) {
			t.Errorf("%s: snapshot timed %s, before it was asked for", name, snap.At)
		}
	}
	g, err := e.Goroutines(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// This test waits in Goroutines: its goroutine is in the profile.
	if !hasFunctionSuffix(g.Profile.Sample, "TestEndpointSnapshots") {
		t.Error("the goroutine profile lacks the goroutine that asked for it")
	}
}

// TestEndpointCPU takes a real CPU profile over a one-second window; a
// window pprof cannot take is refused before any request.
func TestEndpointCPU(t *testing.T) {
	var requests atomic.Int64
	mux := pprofMux()
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		mux.ServeHTTP(w, r)
	}))
	e := mustEndpoint(t, srv.URL+"/debug/pprof/", EndpointOptions{})
	p, err := e.CPU(t.Context(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.PeriodType == nil || p.PeriodType.Type != "cpu" || p.DurationNanos <= 0 {
		t.Errorf("not a CPU profile over a window: period %v, duration %d", p.PeriodType, p.DurationNanos)
	}
	for _, w := range []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond} {
		if _, err := e.CPU(t.Context(), w); err == nil || !strings.Contains(err.Error(), "whole number of seconds") {
			t.Errorf("CPU(%s) = %v; want a refusal", w, err)
		}
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests; want one, for the valid window", n)
	}
}

// TestEndpointCPUBusy: while this process's CPU profiler is taken, both
// net/http/pprof (500) and expose (409) refuse a CPU profile, and the
// error says the profiler is busy.
func TestEndpointCPUBusy(t *testing.T) {
	if err := rpprof.StartCPUProfile(io.Discard); err != nil {
		t.Fatal(err)
	}
	defer rpprof.StopCPUProfile()
	ex, err := expose.Start(t.Context(), expose.Options{Addr: "127.0.0.1:0", BlockProfileRate: -1, MutexProfileFraction: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	for _, tc := range []struct {
		name, base string
		status     int
	}{
		{"net/http/pprof", serve(t, pprofMux()).URL + "/debug/pprof/", http.StatusInternalServerError},
		{"expose", ex.URL(), http.StatusConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mustEndpoint(t, tc.base, EndpointOptions{}).CPU(t.Context(), time.Second)
			var fe *Error
			if !errors.As(err, &fe) || !fe.CPUBusy() || fe.Status != tc.status || fe.Profile != "cpu" {
				t.Fatalf("err = %#v; want an *Error with status %d saying the CPU profiler is busy", err, tc.status)
			}
			if want := "fetch cpu profile from " + tc.base + "profile?seconds=REDACTED: "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start %q", err, want)
			}
		})
	}
}

// TestEndpointToken reads profiles from perfscope's expose package
// requiring a token, as it does off loopback: the token is sent as a
// bearer token, over any Authorization header, and never shown.
func TestEndpointToken(t *testing.T) {
	const token = "t0ken-of-16-chars-or-more"
	ex, err := expose.Start(t.Context(), expose.Options{Addr: "127.0.0.1:0", Token: token, RequireAuth: true,
		BlockProfileRate: -1, MutexProfileFraction: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()

	_, err = mustEndpoint(t, ex.URL(), EndpointOptions{}).Goroutines(t.Context())
	var fe *Error
	if !errors.As(err, &fe) || !fe.Unauthorized() || fe.Status != http.StatusUnauthorized {
		t.Fatalf("without the token: %v; want a 401 *Error", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans lines: %q", err)
	}

	e := mustEndpoint(t, ex.URL(), EndpointOptions{Token: token, Header: http.Header{"Authorization": {"Bearer wrong"}}})
	if _, err := e.Goroutines(t.Context()); err != nil {
		t.Fatalf("with the token: %v", err)
	}
	if _, err := e.Snapshot(t.Context(), "no-such-profile"); err == nil || strings.Contains(err.Error(), token) {
		t.Errorf("err = %v; want a 404 that does not show the token", err)
	}
}

// TestEndpointBroken covers answers that are not profiles: each is one
// line naming the profile and the URL, redacted, and saying what came.
func TestEndpointBroken(t *testing.T) {
	var big bytes.Buffer
	if err := rpprof.Lookup("goroutine").WriteTo(&big, 0); err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	defer close(block)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!DOCTYPE html><html><body>Welcome to our shop</body></html>")
	})
	mux.HandleFunc("/debug/pprof/html-untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		io.WriteString(w, "  <html><body>Welcome</body></html>")
	})
	mux.HandleFunc("/debug/pprof/garbage", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte("\x00\x01garbage\xff\xfe not a profile"))
	})
	mux.HandleFunc("/debug/pprof/big", func(w http.ResponseWriter, r *http.Request) { w.Write(big.Bytes()) })
	mux.HandleFunc("/debug/pprof/refused", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Could not enable CPU profiling: busy\nsecond line", http.StatusInternalServerError)
	})
	mux.HandleFunc("/debug/pprof/cut", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write(big.Bytes()[:10])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection is cut mid-answer
	})
	mux.HandleFunc("/debug/pprof/silent", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-block:
		}
	})
	srv := serve(t, mux)
	base := srv.URL + "/debug/pprof/?token=s3cret"
	e := mustEndpoint(t, base, EndpointOptions{Timeout: 300 * time.Millisecond, Limits: Limits{MaxBytes: int64(big.Len()) / 2}})
	for _, tc := range []struct {
		name, want  string
		status      int
		unreachable bool
		tooLarge    bool
	}{
		{name: "html", want: "got an HTML page, not a profile", status: 200},
		{name: "html-untyped", want: "got an HTML page", status: 200},
		{name: "garbage", want: "answer is not a pprof profile (Content-Type application/octet-stream, 25 bytes)", status: 200},
		{name: "big", want: "profile too large", status: 200, tooLarge: true},
		{name: "refused", want: "500 Internal Server Error: Could not enable CPU profiling: busy", status: 500},
		{name: "missing", want: "404 Not Found", status: 404},
		{name: "cut", want: "read answer: unexpected EOF", status: 200, unreachable: true},
		{name: "silent", want: "no answer within 300ms", unreachable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Snapshot(t.Context(), tc.name)
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v; want an *Error", err)
			}
			msg := err.Error()
			url := srv.URL + "/debug/pprof/" + tc.name + "?debug=REDACTED&token=REDACTED"
			if !strings.HasPrefix(msg, "fetch "+tc.name+" profile from "+url+": ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q; want one line naming %s and saying %q", msg, url, tc.want)
			}
			if strings.Contains(msg, "s3cret") {
				t.Errorf("error %q shows the token", msg)
			}
			if fe.Status != tc.status || fe.Unreachable != tc.unreachable || errors.Is(err, ErrTooLarge) != tc.tooLarge {
				t.Errorf("status %d, unreachable %v, too large %v; want %d, %v, %v",
					fe.Status, fe.Unreachable, errors.Is(err, ErrTooLarge), tc.status, tc.unreachable, tc.tooLarge)
			}
		})
	}

	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := e.Snapshot(ctx, "silent")
		var fe *Error
		if !errors.As(err, &fe) || !fe.Unreachable || !strings.HasSuffix(err.Error(), ": interrupted") {
			t.Errorf("err = %v; want an interrupted fetch", err)
		}
	})
}

// TestEndpointRequest checks what reaches the server: the base's own
// query, the header, and Host where set.
func TestEndpointRequest(t *testing.T) {
	got := make(chan *http.Request, 1)
	mux := pprofMux()
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		mux.ServeHTTP(w, r)
	}))
	e := mustEndpoint(t, srv.URL+"/debug/pprof/?token=s3cret", EndpointOptions{
		Header: http.Header{"Host": {"site.example"}, "X-Test": {"yes"}},
	})
	if _, err := e.Snapshot(t.Context(), "heap"); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.Host != "site.example" || r.Header.Get("X-Test") != "yes" || r.URL.Query().Get("token") != "s3cret" || r.URL.Query().Get("debug") != "0" {
		t.Errorf("server saw host %q, header %v, query %q", r.Host, r.Header, r.URL.RawQuery)
	}
}

// TestParseBase: only http(s) URLs with a host are pprof bases.
func TestParseBase(t *testing.T) {
	for _, s := range []string{"127.0.0.1:6060/debug/pprof/", "ftp://h/", "http:///debug/pprof/", "http://h/%zz?token=s3cret"} {
		if _, err := ParseBase(s); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("ParseBase(%q) = %v; want a refusal that shows no secret", s, err)
		}
	}
}
