package expose

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
)

func TestEndpoints(t *testing.T) {
	s := start(t, Options{})
	base := s.URL()
	root := strings.TrimSuffix(base, "/debug/pprof/")
	for _, tt := range []struct {
		path    string
		want    int
		profile bool   // body must parse as a pprof profile
		text    string // body must contain this
	}{
		{path: "", want: 200, text: "threadcreate"},
		{path: "cmdline", want: 200, text: "expose.test"},
		{path: "symbol", want: 200, text: "num_symbols"},
		{path: "allocs", want: 200, profile: true},
		{path: "heap", want: 200, profile: true},
		{path: "heap?seconds=1", want: 200, profile: true},
		{path: "block", want: 200, profile: true},
		{path: "mutex", want: 200, profile: true},
		{path: "goroutine", want: 200, profile: true},
		{path: "goroutine?debug=1", want: 200, text: "goroutine profile:"},
		{path: "threadcreate", want: 200, profile: true},
		{path: "profile?seconds=1", want: 200, profile: true},
		{path: "wall?seconds=1", want: 200, profile: true},
		{path: "wall?seconds=1&format=folded", want: 200},
		{path: "trace?seconds=0.2", want: 200},
		{path: "nosuch", want: 404},
	} {
		code, body := get(t, nil, base+tt.path, "")
		if code != tt.want {
			t.Errorf("GET %s: status %d, want %d (body %.200q)", tt.path, code, tt.want, body)
			continue
		}
		if tt.profile {
			if _, err := profile.Parse(bytes.NewReader(body)); err != nil {
				t.Errorf("GET %s: body is not a profile: %v", tt.path, err)
			}
		}
		if !bytes.Contains(body, []byte(tt.text)) {
			t.Errorf("GET %s: body %.200q does not contain %q", tt.path, body, tt.text)
		}
	}

	resp, err := http.Post(base+"profile", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST profile: status %d, want 405", resp.StatusCode)
	}

	code, body := get(t, nil, root+"/debug/metrics", "")
	if code != 200 {
		t.Fatalf("GET /debug/metrics: status %d", code)
	}
	var snap MetricsSnapshot
	if err := json.Unmarshal(body, &snap); err != nil {
		t.Fatalf("GET /debug/metrics: %v", err)
	}
	if g := snap.Metrics["/sched/goroutines:goroutines"]; g.Kind != "uint64" || g.Value == nil || *g.Value < 1 {
		t.Errorf("/sched/goroutines:goroutines = %+v, want a positive uint64", g)
	}
	h := snap.Metrics["/sched/latencies:seconds"]
	if h.Kind != "float64histogram" || len(h.Boundaries) != len(h.Counts)+1 {
		t.Errorf("/sched/latencies:seconds = kind %q, %d counts, %d boundaries", h.Kind, len(h.Counts), len(h.Boundaries))
	}
	if !snap.Metrics["/gc/cycles/total:gc-cycles"].Cumulative {
		t.Errorf("/gc/cycles/total:gc-cycles is not marked cumulative")
	}
}

func TestSecondsLimit(t *testing.T) {
	s := start(t, Options{MaxSeconds: 5})
	for _, path := range []string{
		"profile?seconds=100000",
		"profile?seconds=6",
		"profile?seconds=0",
		"profile?seconds=-1",
		"profile?seconds=1.5",
		"profile?seconds=abc",
		"profile?seconds=",
		"profile?seconds=99999999999999999999999",
		"wall?seconds=100000",
		"trace?seconds=100000",
		"trace?seconds=NaN",
		"trace?seconds=Inf",
		"heap?seconds=100000",
		"allocs?seconds=100000",
		"block?seconds=100000",
		"wall?seconds=1&format=svg",
	} {
		code, body := get(t, nil, s.URL()+path, "")
		if code != http.StatusBadRequest {
			t.Errorf("GET %s: status %d, want 400", path, code)
		}
		if n := bytes.Count(body, []byte("\n")); n != 1 {
			t.Errorf("GET %s: body %q, want one line", path, body)
		}
	}
}

// TestConcurrentCaptures starts two captures of each exclusive kind at once:
// one must succeed and the other be refused with 409. All kinds run at the
// same time, which also shows they do not exclude each other.
func TestConcurrentCaptures(t *testing.T) {
	s := start(t, Options{})
	paths := []string{"profile?seconds=2", "wall?seconds=2", "trace?seconds=2"}
	codes := make([][2]int, len(paths))
	bodies := make([][2][]byte, len(paths))
	var wg sync.WaitGroup
	for p, path := range paths {
		for i := range 2 {
			wg.Go(func() { codes[p][i], bodies[p][i] = get(t, nil, s.URL()+path, "") })
		}
	}
	wg.Wait()
	for p, path := range paths {
		c, b := codes[p], bodies[p]
		if c[0] > c[1] {
			c[0], c[1] = c[1], c[0]
			b[0], b[1] = b[1], b[0]
		}
		if c[0] != http.StatusOK || c[1] != http.StatusConflict {
			t.Errorf("two concurrent %s: statuses %v, want one 200 and one 409", path, c)
			continue
		}
		if !bytes.Contains(b[1], []byte("retry")) {
			t.Errorf("409 body %q does not say to retry", b[1])
		}
	}
}

// TestProfilingElsewhere checks the 409 when the process is already being
// CPU profiled by someone other than the server.
func TestProfilingElsewhere(t *testing.T) {
	s := start(t, Options{})
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Skipf("cannot start a CPU profile: %v", err)
	}
	code, body := get(t, nil, s.URL()+"profile?seconds=1", "")
	pprof.StopCPUProfile()
	if code != http.StatusConflict || !bytes.Contains(body, []byte("already in use")) {
		t.Errorf("CPU profile while profiling elsewhere: %d %q, want 409 saying it is in use", code, body)
	}
}

// TestProfileRates checks that Start sets the block and mutex rates and
// Close restores the mutex fraction and turns block profiling off.
func TestProfileRates(t *testing.T) {
	prev := runtime.SetMutexProfileFraction(7)
	defer runtime.SetMutexProfileFraction(prev)

	s, err := Start(context.Background(), Options{Addr: "127.0.0.1:0", MutexProfileFraction: 42})
	if err != nil {
		t.Fatal(err)
	}
	if got := runtime.SetMutexProfileFraction(-1); got != 42 {
		t.Errorf("mutex fraction while serving = %d, want 42", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := runtime.SetMutexProfileFraction(-1); got != 7 {
		t.Errorf("mutex fraction after Close = %d, want 7 (restored)", got)
	}

	s = start(t, Options{MutexProfileFraction: -1})
	if got := runtime.SetMutexProfileFraction(-1); got != 7 {
		t.Errorf("mutex fraction with -1 = %d, want 7 (untouched)", got)
	}
}

func TestCloseOnContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	url := s.URL() + "cmdline"
	cancel()
	<-s.done
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("GET after cancel: status %d, want connection refused", resp.StatusCode)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after cancel: %v", err)
	}
}

func TestAddrInUse(t *testing.T) {
	s := start(t, Options{})
	_, err := Start(context.Background(), Options{Addr: s.Addr().String()})
	// One mention of the address, by net's own error.
	if err == nil || strings.Count(err.Error(), s.Addr().String()) != 1 || !strings.Contains(err.Error(), "listen tcp") {
		t.Errorf("second Start on %s: error %v, want one listen error naming the address once", s.Addr(), err)
	}
}
