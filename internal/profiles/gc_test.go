package profiles

import "testing"

func TestGC(t *testing.T) {
	g, err := GC(load(t, "cpu"), SampleCPU)
	if err != nil {
		t.Fatal(err)
	}
	// The workload concatenates strings over a pointer-rich live heap:
	// the collector and the allocator must both show.
	if g.GC <= 0 || g.GCFraction <= 0 || g.GCFraction >= 1 {
		t.Errorf("GC %d (%.3f of %d)", g.GC, g.GCFraction, g.Total)
	}
	if g.Allocator <= 0 || g.AllocatorFraction <= 0 || g.AllocatorFraction >= 1 {
		t.Errorf("allocator %d (%.3f of %d)", g.Allocator, g.AllocatorFraction, g.Total)
	}
	if g.Combined < max(g.GC, g.Allocator) || g.Combined > g.GC+g.Allocator || g.CombinedFraction > 1 {
		t.Errorf("combined %d with GC %d and allocator %d", g.Combined, g.GC, g.Allocator)
	}
	if g.Unit != "nanoseconds" {
		t.Errorf("unit %q", g.Unit)
	}
}

func TestMatchAny(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"runtime.gcBgMarkWorker", true},
		{"runtime.gcDrainMarkWorkerIdle", true},
		{"runtime.gcAssistAlloc1", true},
		{"runtime.(*sweepLocked).sweep", true},
		{"runtime.GC", true},
		{"runtime.GCstats", false},
		{"runtime.gcStartX", false},
		{"runtime.mallocgc", false},
		{"main.gcBgMarkWorker", false},
	} {
		if got := MatchFunction(tc.name, GCFunctions()); got != tc.want {
			t.Errorf("GC match %s = %v", tc.name, got)
		}
	}
	for _, name := range []string{"runtime.mallocgc", "runtime.mallocgcSmallNoScanSC2", "runtime.mallocgcTiny"} {
		if !MatchFunction(name, AllocatorFunctions()) {
			t.Errorf("%s is not the allocator", name)
		}
	}
}
