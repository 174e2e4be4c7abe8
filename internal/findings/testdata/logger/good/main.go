// Command good gives each request's log line to a buffered channel; one
// goroutine writes the lines through a bufio.Writer to the same slow log
// shipper as bad. When the shipper falls behind, lines are dropped rather
// than requests made to wait.
package main

import (
	"bufio"
	"context"
	"net/http"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

// logRate is how fast the log shipper reads, in bytes per second.
const logRate = 256 << 10

func main() {
	f := harness.LogSink(logRate)
	lines := make(chan string, 4096)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
		select {
		case lines <- r.Method + " " + r.URL.Path + " " + r.RemoteAddr + "\n":
		default: // dropped rather than making the request wait
		}
	})
	harness.Main(func(ctx context.Context) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			w := bufio.NewWriterSize(f, 64<<10)
			defer w.Flush()
			for {
				select {
				case l := <-lines:
					w.WriteString(l)
				case <-ctx.Done():
					return
				}
			}
		}()
		httpload.Serve(ctx, h, "/v1/ping", 8)
		<-done
	})
}
