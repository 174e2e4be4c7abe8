package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/pprof"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/perfscope/perfscope/internal/run"
)

// serveWithPprof serves mux plus net/http/pprof on a loopback port of its
// own and returns the origin and a function that stops the server.
func serveWithPprof(t *testing.T, mux *http.ServeMux) (string, func()) {
	t.Helper()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	var once sync.Once
	stop := func() { once.Do(func() { srv.Close() }) }
	t.Cleanup(stop)
	return "http://" + ln.Addr().String(), stop
}

// TestFailedLoads: a load whose requests fail, because the path is wrong
// or the target dies during the run, exits 1 with the failure leading the
// output, and its run says so.
func TestFailedLoads(t *testing.T) {
	if testing.Short() {
		t.Skip("runs loads")
	}
	mux := http.NewServeMux()
	var served atomic.Int64
	var stop func()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	mux.HandleFunc("/dies", func(w http.ResponseWriter, r *http.Request) {
		// The target dies after 200 answers: every later request is
		// refused.
		if served.Add(1) == 200 {
			go stop()
		}
		w.Write([]byte("ok"))
	})
	origin, stopFn := serveWithPprof(t, mux)
	stop = stopFn

	out, code := perfCLI(t, "load", "-n", "300", "-c", "2", origin+"/missing")
	if code != 1 || !failedBy404(strings.SplitN(out, "\n", 3)[1]) {
		t.Errorf("load of a 404 path: exit %d, output:\n%s", code, out)
	}
	out, code = perfCLI(t, "load", "-n", "300", "-c", "2", "--format", "json", origin+"/missing")
	var res struct {
		Throughput float64 `json:"throughput_rps"`
		Health     struct {
			Failed    bool   `json:"failed"`
			MainError string `json:"main_error"`
		} `json:"health"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || !res.Health.Failed || res.Health.MainError != "status_404" || res.Throughput != 0 {
		t.Errorf("load --format json of a 404 path: exit %d, %+v (%v); want a failed load with no throughput", code, res, err)
	}
	if out, code := perfCLI(t, "load", "-n", "100", "-c", "2", origin+"/ok"); code != 0 || strings.Contains(out, "failed") {
		t.Errorf("healthy load: exit %d, output:\n%s", code, out)
	}

	dir := t.TempDir()
	out, code = perfCLI(t, "profile", "-q", "--no-store", "-d", "2s", "-c", "2", "--out", filepath.Join(dir, "404"), origin+"/missing")
	lines := strings.SplitN(out, "\n", 4)
	if code != 1 || len(lines) < 3 || !failedBy404(lines[1]) {
		t.Errorf("profile of a 404 path: exit %d, output:\n%s", code, out)
	}
	if strings.Contains(out, "none: no rule found") || !strings.Contains(out, "not diagnosed as a healthy service") {
		t.Errorf("a failed load's findings read as a clean bill of health:\n%s", out)
	}
	saved, err := run.Load(filepath.Join(dir, "404"))
	if err != nil {
		t.Fatal(err)
	}
	if h := saved.Load.Health; h == nil || !h.Failed {
		t.Errorf("run.json records the load's health as %+v", h)
	}

	out, code = perfCLI(t, "profile", "-q", "--no-store", "-d", "3s", "-c", "2", "--out", filepath.Join(dir, "dies"), origin+"/dies")
	lines = strings.SplitN(out, "\n", 3)
	if code != 1 || !strings.HasPrefix(lines[1], "The load failed") || !strings.Contains(lines[1], "target stopped answering") {
		t.Errorf("profile of a target that dies: exit %d, output:\n%s", code, out)
	}
}

// failedBy404 recognises the lead of a load whose every request got a 404.
func failedBy404(line string) bool {
	return strings.HasPrefix(line, "The load failed: 100") && strings.Contains(line, "% of requests returned 404 Not Found")
}
