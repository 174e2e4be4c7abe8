// Command bad logs every request with a log.Logger writing to a file:
// the logger holds its mutex across the write system call, so concurrent
// requests queue behind each other.
package main

import (
	"context"
	"log"
	"net/http"
	"os"
	"path/filepath"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

func main() {
	f, err := os.CreateTemp("", "logger-bad-*.log")
	if err != nil {
		panic(err)
	}
	defer os.Remove(filepath.Clean(f.Name()))
	defer f.Close()
	logger := log.New(f, "", log.LstdFlags)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
		logger.Println(r.Method, r.URL.Path, r.RemoteAddr) // want: std-logger-lock
	})
	harness.Main(func(ctx context.Context) {
		httpload.Serve(ctx, h, "/v1/ping", 8)
	})
}
