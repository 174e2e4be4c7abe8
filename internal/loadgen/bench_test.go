package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"testing"
	"time"
)

// cannedServer answers every request with the same bytes, without
// allocating, so that BenchmarkRoundTrip's allocation count is the
// client's alone.
func cannedServer(b *testing.B, resp []byte) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				end := []byte("\r\n\r\n")
				have := 0
				for {
					n, err := c.Read(buf[have:])
					if err != nil {
						return
					}
					have += n
					// The client sends one request at a time.
					if bytes.HasSuffix(buf[:have], end) {
						have = 0
						if _, err := c.Write(resp); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// BenchmarkRoundTrip measures one worker's hot path: send a request on a
// keep-alive connection, read and parse the response, record it. It must
// not allocate: at tens of thousands of requests a second, garbage would
// put the collector on the cores the service under test needs.
func BenchmarkRoundTrip(b *testing.B) {
	body := `{"padded":"     hello","length":10}` + "\n"
	resp := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: application/json\r\n\r\n%s", len(body), body))
	url := cannedServer(b, resp)
	for _, raw := range []bool{true, false} {
		b.Run(fmt.Sprintf("raw=%v", raw), func(b *testing.B) {
			r, err := newRun(context.Background(), Config{URL: url, Requests: 1, Timeout: time.Minute}, raw)
			if err != nil {
				b.Fatal(err)
			}
			r.base = time.Now()
			w := newWorker(r)
			r.workers = []*worker{w}
			defer w.closeConn()
			b.ReportAllocs()
			for b.Loop() {
				w.do(r.now())
			}
			if f := w.failed.Load(); f > 0 {
				b.Fatalf("%d requests failed: %v", f, w.kinds)
			}
		})
	}
}
