// Command bad starts a goroutine per request to send an audit event on a
// channel that nobody reads once the request is over: every request
// leaves a goroutine behind.
package main

import (
	"context"
	"net/http"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

func main() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		audit(r.URL.Path)
		w.Write([]byte("ok\n"))
	})
	harness.Main(func(ctx context.Context) {
		httpload.Serve(ctx, h, "/v1/ping", 4)
	})
}

//go:noinline
func audit(path string) {
	events := make(chan string)
	go func() {
		events <- path // want: goroutine-growth
	}()
}
