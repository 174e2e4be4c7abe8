// Command bad serves requests and appends an access log line per request
// straight to a file: one write system call per line.
package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

func main() {
	f, err := os.CreateTemp("", "writes-bad-*.log")
	if err != nil {
		panic(err)
	}
	defer os.Remove(filepath.Clean(f.Name()))
	defer f.Close()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
		accessLog(f, r)
	})
	// Writes are a small share of a request's CPU: run long enough for
	// them to be sampled.
	harness.MainFor(harness.DefaultDuration, 3*harness.DefaultMinCPU, func(ctx context.Context) {
		httpload.Serve(ctx, h, "/v1/ping", 4)
	})
}

// accessLog writes the request line, the user agent and the content length
// as three lines, each its own write: the unbuffered logging the rule is
// about, at a share of the request's CPU that sampling cannot miss.
//
//go:noinline
func accessLog(f *os.File, r *http.Request) {
	for _, field := range [...]string{r.Method + " " + r.URL.Path, r.UserAgent(), strconv.FormatInt(r.ContentLength, 10)} {
		line := make([]byte, 0, 128)
		line = append(line, field...)
		line = append(line, '\n')
		f.Write(line) // want: small-writes
	}
}
