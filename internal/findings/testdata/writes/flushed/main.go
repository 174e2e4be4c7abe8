// Command flushed logs the start and the end of each request through a
// 16 KiB bufio.Writer but flushes it after every line, so that the log is
// current: the buffer is in the stack, yet every line is its own write
// system call.
package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
	"github.com/perfscope/perfscope/internal/findings/testdata/harness/httpload"
)

type accessLog struct {
	mu  sync.Mutex
	buf *bufio.Writer
}

func main() {
	f, err := os.CreateTemp("", "writes-flushed-*.log")
	if err != nil {
		panic(err)
	}
	defer os.Remove(filepath.Clean(f.Name()))
	defer f.Close()
	l := &accessLog{buf: bufio.NewWriterSize(f, 16<<10)}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.line("start", r)
		w.Write([]byte("ok\n"))
		l.line("done", r)
	})
	// Writes are a small share of a request's CPU: run long enough for
	// them to be sampled.
	harness.MainFor(harness.DefaultDuration, 3*harness.DefaultMinCPU, func(ctx context.Context) {
		httpload.Serve(ctx, h, "/v1/ping", 4)
	})
}

//go:noinline
func (l *accessLog) line(event string, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.WriteString(event)
	l.buf.WriteByte(' ')
	l.buf.WriteString(r.Method)
	l.buf.WriteByte(' ')
	l.buf.WriteString(r.URL.Path)
	l.buf.WriteByte(' ')
	l.buf.WriteString(r.UserAgent())
	l.buf.WriteByte('\n')
	l.buf.Flush() // want: small-writes
}
