package expose

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/felixge/fgprof"
)

// Default capture lengths, as in net/http/pprof and fgprof.
const (
	defaultProfileSeconds = 30
	defaultWallSeconds    = 30
)

// newMux builds the profiling routes. Every route is registered here, on a
// mux of our own: the routes net/http/pprof registers on
// http.DefaultServeMux at init are never used, so importing this package does
// not expose profiles on an application that serves DefaultServeMux.
//
// Every route reads the request's body first, within lim: at most
// maxSymbolBody bytes for a symbol lookup, maxIgnoredBody for the others,
// which take none.
//
// With a sampler, block profiling is on while a CPU profile, an execution
// trace, a wall-clock profile or a block profile delta (seconds=N) is being
// taken.
func newMux(opts Options, lim limits, sampler *blockSampler) http.Handler {
	mux := http.NewServeMux()
	get := func(path string, h http.Handler) { mux.Handle("GET "+path, lim.noBody(h)) }
	// Only the trace takes fractions of a second; net/http/pprof reads the
	// others' seconds as an integer and would silently replace "1.5" by its
	// 30-second default.
	limit := func(h http.Handler) http.Handler { return limitSeconds(opts.MaxSeconds, false, h) }
	limitFrac := func(h http.Handler) http.Handler { return limitSeconds(opts.MaxSeconds, true, h) }

	get("/debug/pprof/", limit(http.HandlerFunc(pprof.Index)))
	get("/debug/pprof/cmdline", http.HandlerFunc(pprof.Cmdline))
	// Symbol lookups are posted by go tool pprof; no seconds involved.
	symbols := lookupSymbols(maxSymbolAddresses)
	mux.Handle("GET /debug/pprof/symbol", lim.body(maxIgnoredBody, symbols))
	mux.Handle("POST /debug/pprof/symbol", lim.body(maxSymbolBody, symbols))
	// collecting turns block profiling on while h serves a request that
	// collects a profile over a window.
	collecting := func(h http.Handler) http.Handler {
		if sampler == nil {
			return h
		}
		return sampler.during(h)
	}

	get("/debug/pprof/profile", limit(exclusive("CPU profile",
		defaultSeconds(min(defaultProfileSeconds, opts.MaxSeconds), collecting(conflictOn500(pprof.Profile))))))
	get("/debug/pprof/trace", limitFrac(exclusive("execution trace", collecting(conflictOn500(pprof.Trace)))))
	get("/debug/pprof/wall", limit(exclusive("wall-clock profile",
		collecting(wallHandler(min(defaultWallSeconds, opts.MaxSeconds), lim.write)))))
	for _, name := range []string{"allocs", "heap", "block", "mutex", "goroutine", "threadcreate"} {
		var h http.Handler = pprof.Handler(name)
		if name == "block" {
			h = withSeconds(collecting(h), h)
		}
		get("/debug/pprof/"+name, limit(h))
	}
	get("/debug/metrics", metricsHandler())
	return mux
}

// limitSeconds answers 400 when the seconds parameter is present but not a
// positive number (an integer unless fractions are allowed) of at most max.
// net/http/pprof would otherwise accept any value, or silently replace a bad
// one with its default.
func limitSeconds(max int, fractions bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !q.Has("seconds") {
			h.ServeHTTP(w, r)
			return
		}
		s := q.Get("seconds")
		var sec float64
		var err error
		if fractions {
			sec, err = strconv.ParseFloat(s, 64)
		} else {
			var n int64
			n, err = strconv.ParseInt(s, 10, 64)
			sec = float64(n)
		}
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange), math.IsNaN(sec), sec <= 0:
			want := "a positive whole number of seconds"
			if fractions {
				want = "a positive number of seconds"
			}
			serveError(w, http.StatusBadRequest, fmt.Sprintf("seconds=%q: want %s, at most %d", s, want, max))
		case sec > float64(max):
			serveError(w, http.StatusBadRequest, fmt.Sprintf("seconds=%s is more than the maximum of %d", s, max))
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// withSeconds serves requests with a seconds parameter (a delta over a
// window) with delta, the others (a cumulative profile) with h.
func withSeconds(delta, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("seconds") {
			delta.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// defaultSeconds sets seconds=sec on requests that have none, so a handler's
// own default (30s for the CPU profile) cannot exceed the configured maximum.
func defaultSeconds(sec int, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !q.Has("seconds") {
			q.Set("seconds", strconv.Itoa(sec))
			r2 := r.Clone(r.Context())
			r2.URL.RawQuery = q.Encode()
			r2.Form = nil
			r = r2
		}
		h.ServeHTTP(w, r)
	})
}

// exclusive lets one request at a time through to h and answers others with
// 409 Conflict. The runtime allows only one CPU profile and one execution
// trace per process; net/http/pprof reports a second one as a 500 Internal
// Server Error, which reads like a bug rather than "try again later".
func exclusive(what string, h http.Handler) http.Handler {
	var busy atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !busy.CompareAndSwap(false, true) {
			serveError(w, http.StatusConflict, fmt.Sprintf("another %s is being collected; retry when it has finished", what))
			return
		}
		defer busy.Store(false)
		h.ServeHTTP(w, r)
	})
}

// conflictOn500 serves h, turning its 500 Internal Server Error into 409
// Conflict. For net/http/pprof's Profile and Trace the only 500 is "could not
// enable profiling/tracing": the process is already being profiled or
// traced by someone other than this server (the application itself, a
// test), which exclusive cannot know about.
func conflictOn500(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(conflictWriter{w}, r)
	})
}

type conflictWriter struct{ http.ResponseWriter }

func (w conflictWriter) WriteHeader(code int) {
	if code == http.StatusInternalServerError {
		code = http.StatusConflict
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection's write
// deadline, which net/http/pprof extends for long captures.
func (w conflictWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wallHandler serves a wall-clock profile taken with fgprof: it samples all
// goroutines' stacks 99 times a second whether they are running or waiting
// (on I/O, locks, channels, sleep), so time spent off-CPU shows up next to
// CPU time. Each sample is a goroutine profile, which stops the world
// briefly; with thousands of goroutines that costs noticeably more than the
// CPU profiler.
//
// Query parameters: seconds (default defSec), format ("pprof", the default,
// or "folded" for Brendan Gregg's flame graph scripts). The answer has
// write to be written once the capture is over.
func wallHandler(defSec int, write time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		sec := float64(defSec)
		if q.Has("seconds") {
			sec, _ = strconv.ParseFloat(q.Get("seconds"), 64) // validated by limitSeconds
		}
		format := fgprof.Format(q.Get("format"))
		switch format {
		case "":
			format = fgprof.FormatPprof
		case fgprof.FormatPprof, fgprof.FormatFolded:
		default:
			serveError(w, http.StatusBadRequest, fmt.Sprintf("format=%q: want pprof or folded", format))
			return
		}

		d := time.Duration(sec * float64(time.Second))
		// The capture may outlive the server's write deadline for the
		// connection; extend it as net/http/pprof does for its profiles.
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Now().Add(d + write))

		// Buffer the profile so that a failed export can still be reported
		// with a status code, and a cancelled request writes nothing.
		var buf bytes.Buffer
		stop := fgprof.Start(&buf, format)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			_ = stop()
			return
		}
		if err := stop(); err != nil {
			serveError(w, http.StatusInternalServerError, fmt.Sprintf("wall-clock profile: %v", err))
			return
		}
		if format == fgprof.FormatFolded {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		} else {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="wall"`)
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(buf.Bytes())
	})
}

// serveError writes a one-line plain-text error, as net/http/pprof does.
func serveError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Del("Content-Disposition")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
}
