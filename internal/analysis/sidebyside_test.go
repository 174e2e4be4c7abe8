package analysis

import (
	"path/filepath"
	"testing"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

func TestBeside(t *testing.T) {
	load := func(edit func(*run.Run)) *profiles.Analysis {
		t.Helper()
		saved, err := run.Load(filepath.Join("testdata", "leftpad-naive"))
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(saved)
		}
		a, _ := profiles.Analyze(profiles.ReadRun(saved), profiles.Options{})
		return a
	}
	naive := load(nil)
	fast := load(func(r *run.Run) {
		r.Load.Throughput *= 2
		r.Load.Successes *= 2
		r.Load.Requests *= 2
		r.Load.Latency.P99 /= 2
	})
	c := Beside("naive", naive, "optimized", fast)
	if c.Base.Name != "naive" || c.Head.Name != "optimized" {
		t.Errorf("sides %+v %+v", c.Base, c.Head)
	}
	got := map[string]Metric{}
	for _, m := range c.Metrics {
		got[m.Name] = m
	}
	for name, verdict := range map[string]string{
		"throughput_rps":            "better",
		"p99_ms":                    "better",
		"errors":                    "same",
		"alloc_objects_per_request": "better", // the same allocations over twice the requests
		"cpu_seconds_per_request":   "better",
		"gc_fraction":               "same",
	} {
		m, ok := got[name]
		if !ok {
			t.Errorf("no metric %s", name)
			continue
		}
		if m.Verdict != verdict {
			t.Errorf("%s: verdict %q, want %q (%v -> %v)", name, m.Verdict, verdict, *m.Base, *m.Head)
		}
	}
	if r := got["throughput_rps"].Ratio; r == nil || *r != 2 {
		t.Errorf("throughput ratio %v", r)
	}
	onlyBase := Beside("a", naive, "b", nil)
	for _, m := range onlyBase.Metrics {
		if m.Head != nil || m.Verdict != "" || m.Ratio != nil {
			t.Errorf("metric without head: %+v", m)
		}
	}
}
