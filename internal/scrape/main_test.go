package scrape

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// A memSink keeps the scrapes in memory: what a store would be handed.
type memSink struct {
	mu      sync.Mutex
	scrapes []*profseries.Scrape
}

func (m *memSink) Append(_ context.Context, s *profseries.Scrape) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scrapes = append(m.scrapes, s)
	return nil
}

// of returns the scrapes of the target whose instance is addr, of type
// typ.
func (m *memSink) of(addr, typ string) []*profseries.Scrape {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*profseries.Scrape
	for _, s := range m.scrapes {
		if s.Target.Get("instance") == addr && s.Type == typ {
			out = append(out, s)
		}
	}
	return out
}

// eventually polls cond until it holds, failing the test after a
// deadline generous enough for a busy machine: tests wait for counts
// reached, never for how fast.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		<-tick.C
	}
}

// pprofServer serves this process's net/http/pprof on loopback, as a
// service does, and returns its host:port.
func pprofServer(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	return serve(t, mux)
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// config writes a configuration of one job over targets and loads it.
func config(t *testing.T, job string, profiles []string, targets ...string) *Config {
	t.Helper()
	q := make([]string, len(targets))
	for i, a := range targets {
		q[i] = fmt.Sprintf("%q", a)
	}
	p := writeFile(t, t.TempDir(), "scrape.yml", fmt.Sprintf(`
global: {scrape_interval: 1s, scrape_timeout: 5s}
scrape_configs:
  - job_name: %s
    profiles: [%s]
    static_configs:
      - targets: [%s]
        labels: {"team name": "pay-ments ✓"}
`, job, strings.Join(profiles, ", "), strings.Join(q, ", ")))
	c, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// start runs a scraper until the test ends.
func start(t *testing.T, s *Scraper) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// healthOf returns the health of the target whose instance is addr.
func healthOf(s *Scraper, addr string) (Health, bool) {
	for _, h := range s.Targets() {
		if h.Labels.Get("instance") == addr {
			return h, true
		}
	}
	return Health{}, false
}
