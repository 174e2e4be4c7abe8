package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/run"
)

// TestFailedLoadMarked: a run whose load failed is marked in the run list
// and leads its page with why; a healthy run is not.
func TestFailedLoadMarked(t *testing.T) {
	ts := startServer(t, Config{})
	upload := func(id string, requests, failures int64) {
		dir := makeRunDir(t, id)
		saved, err := run.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		saved.Load = &loadgen.Result{Requests: requests, Failures: failures, Successes: requests - failures,
			Errors: map[string]int64{}}
		if failures > 0 {
			saved.Load.Errors["status_404"] = failures
		}
		saved.Load.Health = loadgen.Assess(saved.Load, 0)
		data, _ := json.Marshal(saved)
		if err := os.WriteFile(filepath.Join(dir, run.File), data, 0o644); err != nil {
			t.Fatal(err)
		}
		ct, body := multipartRun(t, dir)
		if code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ct, body); code != http.StatusCreated {
			t.Fatalf("upload %s = %d %s", id, code, resp)
		}
	}
	upload("failed", 100, 100)
	upload("healthy", 100, 0)

	_, list := ts.do(t, http.MethodGet, "/runs", "", "", nil)
	for _, row := range strings.Split(string(list), "<tr") {
		failed := strings.Contains(row, ">failed</a>")
		healthy := strings.Contains(row, ">healthy</a>")
		if (failed || healthy) && strings.Contains(row, "load failed") != failed {
			t.Errorf("run list row %q: load failed mark is wrong", row)
		}
	}
	ts.waitAnalysed(t, "failed", "healthy")
	_, page := ts.do(t, http.MethodGet, "/runs/failed", "", "", nil)
	if !strings.Contains(string(page), "the load failed: 100.0% of requests returned 404 Not Found") {
		t.Errorf("failed run's page does not say why its load failed:\n%s", page)
	}
	// The healthy run's page names the failed run in its menu of runs to
	// compare with, marked "load failed"; of itself it says nothing.
	_, page = ts.do(t, http.MethodGet, "/runs/healthy", "", "", nil)
	if strings.Contains(string(page), "The load failed") {
		t.Error("healthy run's page says its load failed")
	}
	if !strings.Contains(string(page), "failed · ") || !strings.Contains(string(page), " · load failed</option>") {
		t.Errorf("healthy run's page does not offer the failed run, marked, to compare with:\n%s", page)
	}
}
