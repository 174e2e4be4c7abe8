package txsummary

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/perfscope/perfscope/expose"
)

// discardWriter is a ResponseWriter that keeps nothing but a reused header
// map, so the benchmark measures the service rather than a recorder.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

func benchData(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "data.json")
	if err := writeDataset(path, defaultUsers); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkSummary measures one GET /summary through the handler as the
// command serves it, with the default data set.
func BenchmarkSummary(b *testing.B) {
	path := benchData(b)
	for _, m := range modes {
		b.Run(m.String(), func(b *testing.B) {
			svc := &service{mode: m, path: path, recheck: recheckInterval}
			h := expose.Middleware(svc.routes())
			r := httptest.NewRequest("GET", "/summary", nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}

// BenchmarkParse measures computing the summary from the file: what naive
// mode does per request and optimized mode once per file version.
func BenchmarkParse(b *testing.B) {
	path := benchData(b)
	for _, bb := range []struct {
		name string
		f    func(string) ([]byte, error)
	}{
		{"naive", summarizeNaive},
		{"optimized", summarizeFile},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bb.f(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
