// Command good appends access log lines to a buffer under a short lock;
// one goroutine writes the buffer out every 100ms.
package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

type accessLog struct {
	mu      sync.Mutex
	pending []byte
	f       *os.File
}

func main() {
	f, err := os.CreateTemp("", "writes-good-*.log")
	if err != nil {
		panic(err)
	}
	defer os.Remove(filepath.Clean(f.Name()))
	defer f.Close()
	l := &accessLog{f: f}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
		l.request(r)
	})
	harness.Main(func(ctx context.Context) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					l.flush()
					return
				case <-t.C:
					l.flush()
				}
			}
		}()
		httpload.Serve(ctx, h, "/v1/ping", 4)
		<-done
	})
}

//go:noinline
func (l *accessLog) request(r *http.Request) {
	var buf [128]byte
	line := append(buf[:0], r.Method...)
	line = append(line, ' ')
	line = append(line, r.URL.Path...)
	line = append(line, ' ')
	line = strconv.AppendInt(line, r.ContentLength, 10)
	line = append(line, '\n')
	l.mu.Lock()
	l.pending = append(l.pending, line...)
	l.mu.Unlock()
}

func (l *accessLog) flush() {
	l.mu.Lock()
	out := l.pending
	l.pending = nil
	l.mu.Unlock()
	l.f.Write(out)
}
