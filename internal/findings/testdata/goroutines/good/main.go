// Command good sends audit events to one long-lived goroutine through a
// buffered channel, dropping events rather than blocking.
package main

import (
	"context"
	"net/http"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

func main() {
	events := make(chan string, 1024)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		audit(events, r.URL.Path)
		w.Write([]byte("ok\n"))
	})
	harness.Main(func(ctx context.Context) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			n := 0
			for {
				select {
				case <-events:
					n++
				case <-ctx.Done():
					println(n)
					return
				}
			}
		}()
		httpload.Serve(ctx, h, "/v1/ping", 4)
		<-done
	})
}

//go:noinline
func audit(events chan<- string, path string) {
	select {
	case events <- path:
	default:
	}
}
