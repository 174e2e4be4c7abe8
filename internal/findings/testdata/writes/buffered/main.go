// Command buffered serves requests and logs each one through a log.Logger
// that writes into a 16 KiB bufio.Writer on a file: the lines are small,
// but the write system calls are 16 KiB each, so the writes are not small.
package main

import (
	"bufio"
	"context"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

// detail is logged with every request, so that the buffer fills and is
// written out often enough for its system calls to be sampled.
var detail = strings.Repeat("x", 900)

func main() {
	f, err := os.CreateTemp("", "writes-buffered-*.log")
	if err != nil {
		panic(err)
	}
	defer os.Remove(filepath.Clean(f.Name()))
	defer f.Close()
	buf := bufio.NewWriterSize(f, 16<<10)
	// The logger serialises its writes, so the buffer needs no lock of
	// its own.
	logger := log.New(buf, "", log.LstdFlags|log.Lmicroseconds)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
		logger.Printf("%s %s %q %s", r.Method, r.URL.Path, r.UserAgent(), detail)
	})
	harness.MainFor(harness.DefaultDuration, 3*harness.DefaultMinCPU, func(ctx context.Context) {
		httpload.Serve(ctx, h, "/v1/ping", 4)
	})
	if err := buf.Flush(); err != nil {
		panic(err)
	}
}
