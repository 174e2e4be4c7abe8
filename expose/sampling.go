package expose

import (
	"net/http"
	"runtime"
	"sync"
	"time"
)

// blockProfileLinger is how long block profiling stays on after the last
// collection that needed it ended. It bridges the gap between consecutive
// captures (a client covering a long window with several CPU profile
// requests, a continuous profiler scraping every 15 seconds) and the
// snapshot a client takes of the cumulative block profile just after its
// CPU profile ends.
var blockProfileLinger = 10 * time.Second

// A blockSampler turns block profiling on while profiles are being
// collected, and off again blockProfileLinger after the last collection
// ended. Block profiling costs every goroutine that blocks two reads of the
// CPU's cycle counter whatever the rate (see DefaultBlockProfileRate), so a
// service not being profiled should not pay for it.
type blockSampler struct {
	rate int // the block profile rate while on

	mu     sync.Mutex
	active int         // collections in progress
	on     bool        // block profiling is on
	gen    int         // counts timers, so a stale one does nothing
	timer  *time.Timer // turns profiling off when it fires
	closed bool
}

// during serves h with block profiling on for the request's duration.
func (b *blockSampler) during(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.acquire()
		defer b.release()
		h.ServeHTTP(w, r)
	})
}

// acquire notes a collection starting and turns block profiling on.
func (b *blockSampler) acquire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.active++
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if !b.on {
		runtime.SetBlockProfileRate(b.rate)
		b.on = true
	}
}

// release notes a collection ending; when none is left, profiling goes
// off after blockProfileLinger.
func (b *blockSampler) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.active--
	if b.active > 0 {
		return
	}
	b.gen++
	gen := b.gen
	b.timer = time.AfterFunc(blockProfileLinger, func() { b.expire(gen) })
}

// expire turns block profiling off if no collection started since the
// timer of generation gen was set.
func (b *blockSampler) expire(gen int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || gen != b.gen || b.active > 0 {
		return
	}
	b.timer = nil
	if b.on {
		runtime.SetBlockProfileRate(0)
		b.on = false
	}
}

// close turns block profiling off for good.
func (b *blockSampler) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if b.on {
		runtime.SetBlockProfileRate(0)
		b.on = false
	}
}
