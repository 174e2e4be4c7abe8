package scrape

import (
	"context"
	"errors"
	"sync"

	"github.com/perfscope/perfscope/internal/profseries"
)

// storeWriters is how many scrapes are handed to the sink at once. The
// store commits the Appends called together in one transaction, so
// several writers let it take many scrapes per commit.
const storeWriters = 32

// errQueueFull is why a profile was not stored when the writers' queue
// was full: the store takes scrapes slower than the targets give them.
var errQueueFull = errors.New("not stored: the store is behind (its queue is full); profile dropped")

// A write is one profile on its way to the sink.
type write struct {
	l *loop
	s *profseries.Scrape
}

// A writer hands the scrapes of every target to the sink from a bounded
// queue, so that a slow store never delays a target's next scrape: when
// the queue is full, the profile is dropped and its target's health says
// so.
type writer struct {
	sink  Sink
	queue chan write
	wg    sync.WaitGroup
}

// startWriter starts n writers of a queue of size scrapes.
func startWriter(sink Sink, n, size int) *writer {
	w := &writer{sink: sink, queue: make(chan write, size)}
	for range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for x := range w.queue {
				w.store(x)
			}
		}()
	}
	return w
}

// enqueue queues s of l's target, or says why it cannot.
func (w *writer) enqueue(l *loop, s *profseries.Scrape) error {
	select {
	case w.queue <- write{l: l, s: s}:
		return nil
	default:
		l.mu.Lock()
		l.h.Dropped++
		l.mu.Unlock()
		return errQueueFull
	}
}

// store hands one scrape to the sink and records the outcome in its
// target's health: stored, or why not, shown with the next scrape's
// errors. The scrape is stored even while the scraper stops: it was
// collected.
func (w *writer) store(x write) {
	err := w.sink.Append(context.WithoutCancel(x.l.ctx), x.s)
	x.l.mu.Lock()
	defer x.l.mu.Unlock()
	if err != nil {
		x.l.storeErrs = append(x.l.storeErrs, TypeError{Type: x.s.Type, Reason: "store: " + oneLine(err)})
		return
	}
	x.l.h.Collected++
}

// stop waits for every queued scrape to be stored; nothing may be queued
// after.
func (w *writer) stop() {
	close(w.queue)
	w.wg.Wait()
}
