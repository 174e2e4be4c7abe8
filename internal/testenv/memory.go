package testenv

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A MemoryWatch samples the test process's memory while hostile input is
// served: its resident set on Linux (/proc/self/statm), elsewhere the
// memory the Go runtime holds from the system. Growth is the most it grew
// above where it was when the watch started.
type MemoryWatch struct {
	base int64
	mu   sync.Mutex
	peak int64
	stop chan struct{}
	done chan struct{}
}

// WatchMemory starts sampling every few milliseconds until Stop.
func WatchMemory() *MemoryWatch {
	debug.FreeOSMemory() // RSS back to what is live, so growth is this watch's
	w := &MemoryWatch{base: memoryNow(), stop: make(chan struct{}), done: make(chan struct{})}
	w.peak = w.base
	go func() {
		defer close(w.done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				m := memoryNow()
				w.mu.Lock()
				w.peak = max(w.peak, m)
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// Stop ends the sampling and returns the growth in bytes.
func (w *MemoryWatch) Stop() int64 {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	w.peak = max(w.peak, memoryNow())
	return w.peak - w.base
}

func memoryNow() int64 {
	if data, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 1 {
			if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return pages * int64(os.Getpagesize())
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.Sys)
}
