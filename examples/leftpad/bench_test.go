package leftpad

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfscope/perfscope/expose"
)

// The seed article's request: pad "test" to 50 characters with '*'.
const benchQuery = "/v1/leftpad/?str=test&len=50&chr=*"

func BenchmarkLeftpad(b *testing.B) {
	for _, m := range modes {
		b.Run(m.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				leftpad("test", 50, '*', m)
			}
		})
	}
}

// benchService returns the service's handler as the command serves it
// (routes behind the labelling middleware), with StatsD packets sent to a
// loopback socket that nobody reads and the log in a temporary file.
func benchService(b *testing.B, m mode) http.Handler {
	return expose.Middleware(benchRoutes(b, m))
}

// benchRoutes is benchService without the middleware.
func benchRoutes(b *testing.B, m mode) *http.ServeMux {
	b.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pc.Close() })
	stats, err := newStatsd(pc.LocalAddr().String(), "leftpad", m)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stats.Close() })
	al, err := openAccessLog(filepath.Join(b.TempDir(), "access.log"), m)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { al.Close() })
	svc := &service{mode: m, stats: stats, log: al}
	return svc.routes()
}

// discardWriter is a ResponseWriter that keeps nothing but a reused header
// map, so the benchmark measures the service rather than a recorder.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkHandler measures one request through the whole handler: query
// parsing, padding, JSON, StatsD packets and the access log.
func BenchmarkHandler(b *testing.B) {
	for _, m := range modes {
		b.Run(m.String(), func(b *testing.B) {
			h := benchService(b, m)
			r := httptest.NewRequest("GET", benchQuery, nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
			reportCPU(b, cpu)
		})
	}
}

// reportCPU reports the process's CPU time per operation since start as
// cpu-ns/op, next to the wall-clock ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if used := processCPU() - start; used > 0 && b.N > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkHandlerParallel is BenchmarkHandler from GOMAXPROCS goroutines,
// where the naive logger's mutex is contended.
func BenchmarkHandlerParallel(b *testing.B) {
	for _, m := range modes {
		b.Run(m.String(), func(b *testing.B) {
			h := benchService(b, m)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				r := httptest.NewRequest("GET", benchQuery, nil)
				w := &discardWriter{h: http.Header{}}
				for pb.Next() {
					h.ServeHTTP(w, r)
				}
			})
		})
	}
}

// BenchmarkMiddleware compares the optimized handler with and without
// expose.Middleware, and with expose.ContextMiddleware: the cost of
// labelling requests on a real handler.
func BenchmarkMiddleware(b *testing.B) {
	for _, bb := range []struct {
		name string
		wrap func(*http.ServeMux) http.Handler
	}{
		{"bare", func(m *http.ServeMux) http.Handler { return m }},
		{"labelled", func(m *http.ServeMux) http.Handler { return expose.Middleware(m) }},
		{"context", func(m *http.ServeMux) http.Handler { return expose.ContextMiddleware(m) }},
	} {
		b.Run(bb.name, func(b *testing.B) {
			h := bb.wrap(benchRoutes(b, optimized))
			r := httptest.NewRequest("GET", benchQuery, nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
			reportCPU(b, cpu)
		})
	}
}
