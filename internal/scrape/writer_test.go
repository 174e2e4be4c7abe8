package scrape

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/profseries"
)

// A stuckSink takes no scrape until released: a store far slower than
// the scrapes.
type stuckSink struct {
	memSink
	release chan struct{}
}

func (s *stuckSink) Append(ctx context.Context, sc *profseries.Scrape) error {
	<-s.release
	return s.memSink.Append(ctx, sc)
}

// TestStuckStoreNeverDelaysScrapes scrapes a real endpoint into a store
// that takes nothing: the target's scrapes keep starting, the profiles
// the full queue cannot take are dropped and its health says so, and
// once the store moves, what was queued is stored.
func TestStuckStoreNeverDelaysScrapes(t *testing.T) {
	addr := pprofServer(t)
	m := &stuckSink{release: make(chan struct{})}
	s := New(config(t, "api", []string{"goroutine"}, addr), m, Options{MaxQueued: 1})
	s.writers = 1
	start(t, s)
	var h Health
	eventually(t, "scrapes started with the store stuck", func() bool {
		h, _ = healthOf(s, addr)
		return h.Scrapes >= 4 && h.Dropped >= 1 && strings.Contains(h.LastError, "store is behind")
	})
	if h.Collected != 0 {
		t.Errorf("%d profiles stored by a store that took none", h.Collected)
	}
	if !h.Up {
		t.Errorf("target down while its profiles are collected: %+v", h)
	}
	close(m.release)
	eventually(t, "the queued profiles stored", func() bool {
		h, _ = healthOf(s, addr)
		return h.Collected >= 2 && len(m.of(addr, "goroutine")) == int(h.Collected)
	})
}

// A failingSink refuses every scrape.
type failingSink struct{}

func (failingSink) Append(context.Context, *profseries.Scrape) error {
	return errors.New("database is full\nsecond line")
}

// TestStoreErrorInHealth: why the store refused a profile shows in its
// target's health, one line, and no profile counts as stored.
func TestStoreErrorInHealth(t *testing.T) {
	addr := pprofServer(t)
	s := New(config(t, "api", []string{"goroutine"}, addr), failingSink{}, Options{})
	start(t, s)
	var h Health
	eventually(t, "the store's refusal in the health", func() bool {
		h, _ = healthOf(s, addr)
		return h.LastError != ""
	})
	if h.LastError != "goroutine: store: database is full" || h.Collected != 0 || h.Failures == 0 {
		t.Errorf("health after refused profiles: %+v", h)
	}
}
