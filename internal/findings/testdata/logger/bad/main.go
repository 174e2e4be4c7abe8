// Command bad logs every request with a log.Logger writing to its output,
// which a log shipper drains more slowly than requests arrive: the logger
// holds its mutex across the write system call, so once the pipe is full
// concurrent requests queue behind each other.
package main

import (
	"context"
	"log"
	"net/http"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

// logRate is how fast the log shipper reads, in bytes per second.
const logRate = 256 << 10

func main() {
	logger := log.New(harness.LogSink(logRate), "", log.LstdFlags)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
		logger.Println(r.Method, r.URL.Path, r.RemoteAddr) // want: std-logger-lock
	})
	harness.Main(func(ctx context.Context) {
		httpload.Serve(ctx, h, "/v1/ping", 8)
	})
}
