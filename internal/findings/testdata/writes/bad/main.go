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

//go:noinline
func accessLog(f *os.File, r *http.Request) {
	line := make([]byte, 0, 128)
	line = append(line, r.Method...)
	line = append(line, ' ')
	line = append(line, r.URL.Path...)
	line = append(line, ' ')
	line = strconv.AppendInt(line, r.ContentLength, 10)
	line = append(line, '\n')
	f.Write(line) // want: small-writes
}
