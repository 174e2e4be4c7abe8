// Command good gives each request's log line to a buffered channel; one
// goroutine writes the lines through a bufio.Writer.
package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"path/filepath"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

func main() {
	f, err := os.CreateTemp("", "logger-good-*.log")
	if err != nil {
		panic(err)
	}
	defer os.Remove(filepath.Clean(f.Name()))
	defer f.Close()
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
