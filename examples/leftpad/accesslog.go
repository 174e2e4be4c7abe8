package leftpad

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Both modes write the same line per request:
//
//	2006/01/02 15:04:05 GET /v1/leftpad/?str=a&len=5 127.0.0.1:50412 "curl/8.5.0" 41us
//
// The user agent is quoted with backslash escapes so that a client cannot
// forge log lines.

const (
	// flushInterval bounds how stale the optimized log file can be.
	flushInterval = 200 * time.Millisecond
	// flushSize makes the writer flush early when this much is pending, so
	// the buffer stays small under any load.
	flushSize = 64 << 10
)

// accessLog writes one line per request to a file. Naive mode uses a
// log.Logger on the file: one write system call per line, made while
// holding the logger's mutex, so concurrent requests queue behind each
// other's disk writes. Optimized mode appends the line to a buffer under a
// mutex held only for the copy, and one goroutine writes the buffer out
// every flushInterval.
type accessLog struct {
	mode mode
	file *os.File
	std  *log.Logger // naive mode

	// Optimized mode.
	replacer *strings.Replacer
	lines    sync.Pool
	mu       sync.Mutex
	pending  []byte // guarded by mu
	spare    []byte // owned by the flushing goroutine
	kick     chan struct{}
	stop     chan struct{}
	stopped  chan error
}

// userAgentReplacements are the strings.NewReplacer arguments that escape a
// user agent for the quoted log field.
func userAgentReplacements() []string {
	return []string{`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`}
}

// openAccessLog opens (appends to) the log file at path.
func openAccessLog(path string, m mode) (*accessLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("access log: %w", err)
	}
	l := &accessLog{mode: m, file: f}
	if m == naive {
		l.std = log.New(f, "", log.LstdFlags)
		return l, nil
	}
	l.replacer = strings.NewReplacer(userAgentReplacements()...)
	l.kick = make(chan struct{}, 1)
	l.stop = make(chan struct{})
	l.stopped = make(chan error, 1)
	go l.flushLoop()
	return l, nil
}

// request logs one request that took d.
func (l *accessLog) request(r *http.Request, d time.Duration) {
	if l.mode == naive {
		replacer := strings.NewReplacer(userAgentReplacements()...)
		l.std.Printf("%s %s %s \"%s\" %dus", r.Method, r.RequestURI, r.RemoteAddr, replacer.Replace(r.UserAgent()), d.Microseconds())
		return
	}
	// Format outside the lock, into a pooled buffer.
	bp, _ := l.lines.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := time.Now().AppendFormat((*bp)[:0], "2006/01/02 15:04:05 ")
	b = append(b, r.Method...)
	b = append(b, ' ')
	b = append(b, r.RequestURI...)
	b = append(b, ' ')
	b = append(b, r.RemoteAddr...)
	b = append(b, ' ', '"')
	b = append(b, l.replacer.Replace(r.UserAgent())...)
	b = append(b, '"', ' ')
	b = strconv.AppendInt(b, d.Microseconds(), 10)
	b = append(b, "us\n"...)

	l.mu.Lock()
	l.pending = append(l.pending, b...)
	full := len(l.pending) >= flushSize
	l.mu.Unlock()
	*bp = b
	l.lines.Put(bp)
	if full {
		select {
		case l.kick <- struct{}{}:
		default: // a flush is already due
		}
	}
}

// flushLoop writes pending lines every flushInterval, or sooner when kicked,
// until Close.
func (l *accessLog) flushLoop() {
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-l.kick:
		case <-l.stop:
			l.stopped <- l.flush()
			return
		}
		// A failed write (disk full) loses those lines; requests go on.
		_ = l.flush()
	}
}

// flush swaps the pending buffer for the spare one under the lock, then
// writes outside it, so requests never wait for the disk.
func (l *accessLog) flush() error {
	l.mu.Lock()
	out := l.pending
	l.pending = l.spare[:0]
	l.mu.Unlock()
	var err error
	if len(out) > 0 {
		_, err = l.file.Write(out)
	}
	l.spare = out
	return err
}

// Close writes out what is pending and closes the file.
func (l *accessLog) Close() error {
	var err error
	if l.mode == optimized {
		close(l.stop)
		err = <-l.stopped
	}
	if cerr := l.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("access log: %w", err)
	}
	return nil
}
