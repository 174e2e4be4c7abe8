package profiles

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/run"
)

// saveRun writes a run directory holding the workload's profiles and a
// run.json as the capture package writes it, and loads it back.
func saveRun(t *testing.T, edit func(*run.Run)) *run.Run {
	t.Helper()
	dir := t.TempDir()
	saved := &run.Run{
		ID:     "20260101T000000Z-test",
		Target: "http://127.0.0.1:8080/",
		Start:  time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		End:    time.Date(2026, 1, 1, 0, 0, 12, 0, time.UTC),
		Window: 10,
		Load: &loadgen.Result{
			Mode: "closed", Concurrency: 8, Requests: 50000, Successes: 49990, Failures: 10,
			Errors: map[string]int64{"status_500": 10}, Throughput: 5000, DurationSeconds: 10,
			Latency: loadgen.Latency{P50: 1.2, P90: 2.5, P99: 7.5, P999: 12, Max: 20},
		},
		Notes: []string{"The block profile is empty: ..."},
	}
	for _, kind := range []string{run.KindCPU, run.KindAllocs, run.KindBlock, run.KindMutex, run.KindGoroutineStart, run.KindGoroutineEnd} {
		data, err := os.ReadFile(filepath.Join(profilesDir, kind+".pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, kind+".pb.gz"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		pf := run.ProfileFile{Kind: kind, File: kind + ".pb.gz", Samples: 1}
		if kind != run.KindGoroutineStart && kind != run.KindGoroutineEnd {
			pf.Seconds = 2
		}
		saved.Profiles = append(saved.Profiles, pf)
	}
	saved.Profiles = append(saved.Profiles, run.ProfileFile{Kind: run.KindHeap, Error: "fetch heap profile from http://127.0.0.1:6060/debug/pprof/heap: 404 Not Found"})
	if edit != nil {
		edit(saved)
	}
	data, err := json.Marshal(saved)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, run.File), data, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := run.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return loaded
}

func TestAnalyze(t *testing.T) {
	saved := saveRun(t, nil)
	a, errs := Analyze(ReadRun(saved), Options{})
	if len(errs) != 0 {
		t.Errorf("warnings: %v", errs)
	}
	if a.Run.ID != saved.ID || a.Run.Dir != saved.Dir || a.Run.Load == nil || len(a.Notes) != 1 {
		t.Errorf("run info %+v, load %v, notes %v", a.Run, a.Run.Load, a.Notes)
	}
	if len(a.ProfileErrors) != 1 || a.ProfileErrors[0].Kind != run.KindHeap {
		t.Errorf("profile errors %+v", a.ProfileErrors)
	}
	if a.CPU == nil || a.CPU.Flat == nil || a.CPU.Cum == nil || a.CPU.GC == nil || a.CPU.Lines == nil {
		t.Fatalf("cpu section incomplete: %+v", a.CPU)
	}
	if !a.CPU.Flat.Focus || len(a.CPU.Flat.Rows) == 0 || a.CPU.Total != a.CPU.ProfileTotal {
		t.Errorf("cpu flat table: %+v", a.CPU.Flat)
	}
	if u := userRows(a.CPU.Flat.Rows); len(u) > DefaultTop {
		t.Errorf("%d user rows, want at most %d", len(u), DefaultTop)
	}
	if a.CPU.Cores <= 0 || a.CPU.Seconds != 2 {
		t.Errorf("cores %f seconds %f", a.CPU.Cores, a.CPU.Seconds)
	}
	if l := findSite(a.CPU.Lines.Rows, "main.concatLoop"); l == nil || l.Line != siteLine(t, "concat") || !strings.HasPrefix(l.Callee, "runtime.concatstring") {
		t.Errorf("hot line of main.concatLoop: %+v", l)
	}
	if a.CPU.GC.GCFraction <= 0 {
		t.Errorf("gc fraction %f", a.CPU.GC.GCFraction)
	}
	if a.Allocs == nil || a.Allocs.ByObjects.Rows[0].Function != "main.concatLoop" || a.Allocs.ByBytes.Rows[0].Function != "main.makeBuffers" {
		t.Errorf("allocs section: %+v", a.Allocs)
	}
	if a.Block == nil || a.Mutex == nil || a.Goroutines == nil || len(a.Routes) == 0 {
		t.Errorf("block %v mutex %v goroutines %v routes %d", a.Block, a.Mutex, a.Goroutines, len(a.Routes))
	}
	// Allocations per request: objects over (throughput × window).
	if a.PerRequest == nil || a.PerRequest.AllocObjects == nil || a.PerRequest.CPUSeconds == nil {
		t.Fatalf("per request: %+v", a.PerRequest)
	}
	if want := float64(a.Allocs.Objects) / (5000 * 2); *a.PerRequest.AllocObjects != want {
		t.Errorf("allocs per request %f, want %f", *a.PerRequest.AllocObjects, want)
	}
	if want := float64(a.CPU.ProfileTotal) / 1e9 / (5000 * 2); math.Abs(*a.PerRequest.CPUSeconds-want) > want*1e-9 {
		t.Errorf("cpu per request %g, want %g", *a.PerRequest.CPUSeconds, want)
	}
	if a.Profiles[run.KindCPU] == nil || a.Classifier == nil {
		t.Error("profiles and classifier not kept for later consumers")
	}

	// The JSON names are the documented ones.
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"run":`, `"load":`, `"per_request":`, `"cpu":`, `"top_flat":`, `"top_cum":`, `"gc_fraction":`,
		`"allocs":`, `"by_objects":`, `"by_bytes":`, `"block":`, `"mutex":`, `"goroutines":`, `"routes":`, `"notes":`, `"profile_errors":`,
		`"flat_share":`, `"callee":`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	var back Analysis
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.CPU.Flat.Rows[0] != a.CPU.Flat.Rows[0] {
		t.Errorf("JSON round trip changed a row: %+v vs %+v", back.CPU.Flat.Rows[0], a.CPU.Flat.Rows[0])
	}
}

func TestAnalyzeAll(t *testing.T) {
	a, errs := Analyze(ReadRun(saveRun(t, nil)), Options{All: true, Top: 3})
	if len(errs) != 0 {
		t.Errorf("warnings: %v", errs)
	}
	if a.CPU.Flat.Focus || len(a.CPU.Flat.Rows) != 3 || a.CPU.Flat.Omitted == 0 {
		t.Errorf("all: focus %v rows %d omitted %d", a.CPU.Flat.Focus, len(a.CPU.Flat.Rows), a.CPU.Flat.Omitted)
	}
	if a.Allocs.ByObjects.Attribution != AttributeLeaf {
		t.Errorf("allocation sites attributed to %s", a.Allocs.ByObjects.Attribution)
	}
}

func TestAnalyzeRoute(t *testing.T) {
	a, errs := Analyze(ReadRun(saveRun(t, nil)), Options{Route: "GET /fib"})
	if len(errs) != 0 {
		t.Errorf("warnings: %v", errs)
	}
	if a.CPU.Total >= a.CPU.ProfileTotal || a.CPU.Total <= 0 {
		t.Errorf("route total %d of %d", a.CPU.Total, a.CPU.ProfileTotal)
	}
	if u := userRows(a.CPU.Flat.Rows); len(u) == 0 || u[0].Function != "main.fib" {
		t.Errorf("route GET /fib: top user functions %v", names(u))
	}
	if _, ok := a.CPU.Flat.Find("main.burnCPU"); ok {
		t.Error("main.burnCPU of another route in the GET /fib table")
	}

	a, errs = Analyze(ReadRun(saveRun(t, nil)), Options{Route: "GET /nowhere"})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "routes seen: ") || len(a.Warnings) != 1 {
		t.Errorf("unknown route: %v", errs)
	}
}

func TestAnalyzeMissingProfiles(t *testing.T) {
	saved := saveRun(t, func(r *run.Run) {
		r.Load = nil
		r.Profiles = []run.ProfileFile{
			{Kind: run.KindCPU, Error: "fetch cpu profile from http://x/debug/pprof/profile: 500 cpu profiling already in use"},
			{Kind: run.KindAllocs, File: "allocs.pb.gz"},
			{Kind: run.KindBlock, File: "missing.pb.gz"},
		}
	})
	a, errs := Analyze(ReadRun(saved), Options{})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "block") {
		t.Errorf("errors %v", errs)
	}
	if a.CPU != nil || a.Allocs == nil || a.Block != nil || a.PerRequest != nil || a.Run.Load != nil {
		t.Errorf("sections: cpu %v allocs %v block %v per request %v", a.CPU, a.Allocs != nil, a.Block, a.PerRequest)
	}
	if len(a.ProfileErrors) != 2 {
		t.Errorf("profile errors %+v", a.ProfileErrors)
	}
}
