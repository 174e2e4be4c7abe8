package scrape

import (
	"bytes"
	"context"
	"net/http"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// sink keeps allocations alive so the allocs profile has stacks.
var sink [][]byte

// TestScrapeRealEndpoint scrapes this process's own net/http/pprof: CPU
// over the interval, allocs as the target's deltas, heap in use,
// goroutines, and goroutineleak, which this Go does not make unless
// built with its experiment.
func TestScrapeRealEndpoint(t *testing.T) {
	addr := pprofServer(t)
	m := &memSink{}
	s := New(config(t, "api", []string{"cpu", "allocs", "heap", "goroutine", "goroutineleak"}, addr), m, Options{})
	start(t, s)
	for _, typ := range []string{"cpu", "allocs", "heap", "goroutine"} {
		eventually(t, typ+" scrapes", func() bool {
			sink = append(sink[:0], make([]byte, 1<<16))
			return len(m.of(addr, typ)) >= 2
		})
	}
	h, _ := healthOf(s, addr)
	if !h.Up || h.Deltas["allocs"] != deltaTarget || h.Generation != 0 {
		t.Errorf("health %+v", h)
	}
	if !slices.Contains(h.Unsupported, "goroutineleak") && len(m.of(addr, "goroutineleak")) == 0 {
		t.Errorf("goroutineleak neither collected nor marked unsupported: %+v", h)
	}
	for _, sc := range m.of(addr, "allocs") {
		if got := sc.Profile.SampleType[0].Type; got != "alloc_objects" || len(sc.Profile.SampleType) != 2 {
			t.Errorf("allocs delta values: %v", sc.Profile.SampleType)
		}
		checkNotNegative(t, sc)
		if !sc.End.After(sc.Start) {
			t.Errorf("allocs window %v..%v", sc.Start, sc.End)
		}
	}
	for _, sc := range m.of(addr, "heap") {
		if got := sc.Profile.SampleType[0].Type; got != "inuse_objects" || !sc.Start.Equal(sc.End) {
			t.Errorf("heap snapshot %v over %v..%v", sc.Profile.SampleType, sc.Start, sc.End)
		}
	}
	cpu := m.of(addr, "cpu")[0]
	if cpu.Target.Get("team name") != "pay-ments ✓" || cpu.Target.Get("job") != "api" || cpu.RawBytes <= 0 {
		t.Errorf("cpu scrape of %s, %d raw bytes", cpu.Target, cpu.RawBytes)
	}
}

func checkNotNegative(t *testing.T, sc *profseries.Scrape) {
	t.Helper()
	for _, smp := range sc.Profile.Sample {
		for i, v := range smp.Value {
			if v < 0 {
				t.Fatalf("%s scrape (generation %d) has %s %d", sc.Type, sc.Process.Generation, sc.Profile.SampleType[i].Type, v)
			}
		}
	}
}

// recordedTarget serves an allocs profile recorded from this process,
// the one the test sets, and refuses ?seconds= as net/http/pprof does for
// a profile it makes no deltas of: a target whose deltas the scraper must
// subtract.
type recordedTarget struct {
	mu   sync.Mutex
	body []byte
}

func (rt *recordedTarget) set(body []byte) {
	rt.mu.Lock()
	rt.body = body
	rt.mu.Unlock()
}

func (rt *recordedTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("seconds") != "" {
		http.Error(w, `"seconds" parameter is not supported for this profile type`, http.StatusBadRequest)
		return
	}
	rt.mu.Lock()
	body := rt.body
	rt.mu.Unlock()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(body)
}

// TestRestartNeverNegative serves a real allocs snapshot, then one taken
// later in the process's life, then the first again — counters going
// back, as after a restart — then the second: the scraper subtracts
// consecutive snapshots, sees the restart, starts a new generation from
// a new baseline, and no delta is ever negative.
func TestRestartNeverNegative(t *testing.T) {
	early := allocsSnapshot(t)
	for range 200 {
		sink = append(sink, make([]byte, 4096))
	}
	late := allocsSnapshot(t)
	sink = nil
	rt := &recordedTarget{body: early}
	addr := serve(t, rt)
	m := &memSink{}
	s := New(config(t, "restart", []string{"allocs"}, addr), m, Options{})
	start(t, s)
	health := func() Health { h, _ := healthOf(s, addr); return h }
	eventually(t, "subtraction chosen", func() bool { return health().Deltas["allocs"] == deltaSubtracted })
	rt.set(late)
	eventually(t, "a delta of the first process", func() bool {
		for _, sc := range m.of(addr, "allocs") {
			if len(sc.Profile.Sample) > 0 {
				return true
			}
		}
		return false
	})
	rt.set(early)
	eventually(t, "the restart seen, and a new baseline", func() bool {
		h := health()
		return h.Generation == 1 && h.Deltas["allocs"] == deltaSubtracted
	})
	rt.set(late)
	eventually(t, "a delta of the second process", func() bool {
		for _, sc := range m.of(addr, "allocs") {
			if len(sc.Profile.Sample) > 0 && sc.Process.Generation == 1 {
				return true
			}
		}
		return false
	})
	for _, sc := range m.of(addr, "allocs") {
		checkNotNegative(t, sc)
		if sc.Process.Generation > 1 {
			t.Errorf("generation %d: one restart only", sc.Process.Generation)
		}
	}
}

// allocsSnapshot records this process's allocs profile, as net/http/pprof
// serves it. The runtime publishes allocations at the end of a garbage
// collection cycle: one runs first so that the latest count.
func allocsSnapshot(t *testing.T) []byte {
	t.Helper()
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestShardSplitsTargets(t *testing.T) {
	var addrs []string
	for i := range 300 {
		addrs = append(addrs, "10.0.0."+strconv.Itoa(1+i%3)+":"+strconv.Itoa(6000+i))
	}
	cfg := config(t, "many", []string{"goroutine"}, addrs...)
	seen := map[string]int{}
	const n = 3
	for i := range n {
		s := New(cfg, &memSink{}, Options{Shard: Shard{I: i, N: n}})
		kept := s.targetsNow()
		if len(kept) < 300/n/2 {
			t.Errorf("shard %d/%d keeps %d of 300", i, n, len(kept))
		}
		for _, tg := range kept {
			seen[tg.Address]++
		}
	}
	if len(seen) != 300 {
		t.Errorf("%d of 300 targets kept by some shard", len(seen))
	}
	for a, c := range seen {
		if c != 1 {
			t.Errorf("%s kept by %d shards", a, c)
		}
	}
	for _, bad := range []string{"3/3", "-1/2", "1", "a/b", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	if sh, err := ParseShard("1/4"); err != nil || sh != (Shard{1, 4}) {
		t.Errorf("ParseShard(1/4) = %v, %v", sh, err)
	}
}

// TestFileDiscovery watches a target file: targets it adds are scraped,
// a file made invalid keeps the targets it had and says why with its
// line.
func TestFileDiscovery(t *testing.T) {
	dir := t.TempDir()
	a, b := pprofServer(t), pprofServer(t)
	writeFile(t, dir, "targets/one.json", `[{"targets": ["`+a+`"], "labels": {"zone": "eu-west 1"}}]`)
	p := writeFile(t, dir, "scrape.yml", `
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: disc
    profiles: [goroutine]
    file_sd_configs:
      - files: [targets/*.json, targets/*.yml]
        refresh_interval: 1s
`)
	cfg, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	m := &memSink{}
	s := New(cfg, m, Options{})
	start(t, s)
	eventually(t, "the first file's target scraped", func() bool { return len(m.of(a, "goroutine")) > 0 })
	if got := m.of(a, "goroutine")[0].Target.Get("zone"); got != "eu-west 1" {
		t.Errorf("zone label %q", got)
	}
	writeFile(t, dir, "targets/two.yml", "- targets: ['"+b+"']\n  labels: {ключ: значение}\n")
	eventually(t, "the second file's target scraped", func() bool { return len(m.of(b, "goroutine")) > 0 })
	if got := m.of(b, "goroutine")[0].Target.Get("ключ"); got != "значение" {
		t.Errorf("unicode label %q", got)
	}
	writeFile(t, dir, "targets/two.yml", "- targets: ['"+b+"']\n  labelz: {}\n")
	eventually(t, "the broken file reported", func() bool {
		for _, st := range s.Discovery() {
			if strings.HasSuffix(st.Path, "two.yml") && strings.Contains(st.Err, `two.yml:2: unknown key "labelz"`) {
				return true
			}
		}
		return false
	})
	if _, ok := healthOf(s, b); !ok {
		t.Errorf("a broken file dropped its targets")
	}
}

// TestReloadKeepsOldConfig reloads a bad file (kept: the old targets go
// on), then a good one (applied).
func TestReloadKeepsOldConfig(t *testing.T) {
	a, b := pprofServer(t), pprofServer(t)
	dir := t.TempDir()
	p := writeFile(t, dir, "scrape.yml", "global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: r\n    profiles: [goroutine]\n    static_configs: [{targets: ['"+a+"']}]\n")
	cfg, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	m := &memSink{}
	s := New(cfg, m, Options{})
	start(t, s)
	eventually(t, "the first target scraped", func() bool { return len(m.of(a, "goroutine")) > 0 })

	writeFile(t, dir, "scrape.yml", "global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: r\n    profiles: [goroutine]\n    static_configs: [{targets: ['"+b+"'], lables: {}}]\n")
	err = s.Reload(p)
	if err == nil || !strings.Contains(err.Error(), `scrape.yml:5: unknown key "lables" in static_configs[0] (did you mean labels?)`) {
		t.Fatalf("reload of a bad file: %v", err)
	}
	if s.Config() != cfg {
		t.Errorf("a bad file replaced the configuration")
	}
	if _, ok := healthOf(s, a); !ok {
		t.Errorf("a bad file stopped the old target")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reloads := make(chan error, 10)
	WatchFile(ctx, p, 50*time.Millisecond, func() error { err := s.Reload(p); reloads <- err; return err }, nil)
	writeFile(t, dir, "scrape.yml", "global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: r\n    profiles: [goroutine]\n    static_configs: [{targets: ['"+b+"']}]\n")
	select {
	case err := <-reloads:
		if err != nil {
			t.Fatalf("reload of a good file: %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the changed file was never reloaded")
	}
	eventually(t, "the new target scraped", func() bool { return len(m.of(b, "goroutine")) > 0 })
	eventually(t, "the old target stopped", func() bool { _, ok := healthOf(s, a); return !ok })
}
