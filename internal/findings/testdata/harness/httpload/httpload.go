// Package httpload serves a handler on loopback and loads it, for the
// findings tests' workloads that are services.
package httpload

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

// Serve serves h on a loopback port and sends it GET requests for path on
// concurrency connections until ctx is done, as a load generator would:
// each connection has its own client, so the load shares no lock with the
// other connections. It returns the number of requests served.
func Serve(ctx context.Context, h http.Handler, path string, concurrency int) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()
	url := fmt.Sprintf("http://%s%s", ln.Addr(), path)
	var n atomic.Int64
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 5 * time.Second}
			defer client.CloseIdleConnections()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			harness.Loop(ctx, func() {
				resp, err := client.Do(req)
				if err != nil {
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				n.Add(1)
			})
		})
	}
	wg.Wait()
	return int(n.Load())
}
