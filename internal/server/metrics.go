package server

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// metricsPath is where the metrics are served.
const metricsPath = "/metrics"

// readMetrics lets a request for the metrics through on the pages' terms
// (readAccess): open on loopback and with --public-read, a token from
// elsewhere, as a Bearer header or a Basic password (Prometheus'
// authorization or basic_auth settings). They name the routes used, how
// often and how fast, and the uploads received. Everything else goes
// straight to h.
func (s *Server) readMetrics(h http.Handler) http.Handler {
	read := s.readAccess(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == metricsPath {
			read.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// statusWriter records the status code a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument wraps h with the request timeout, panic recovery and metrics.
// Routes are labelled by their pattern, not their path, so the number of
// series stays bounded whatever clients ask for.
func (s *Server) instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.cfg.Logf("%s %s: internal error: %v", r.Method, r.URL.Path, v)
				if sw.code == 0 {
					s.fail(sw, r, http.StatusInternalServerError, fmt.Errorf("internal error: %v", v))
				}
			}
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			code := sw.code
			if code == 0 {
				code = http.StatusOK
			}
			s.metrics.Observe(r.Method, route, code, time.Since(start))
		}()
		h.ServeHTTP(sw, r)
	})
}
