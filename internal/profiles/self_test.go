package profiles

import (
	"testing"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/run"
)

func TestDropProfilerSamples(t *testing.T) {
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	handler := fn(1, "net/http/pprof.Profile")
	sleep := fn(2, "time.Sleep")
	work := fn(3, "main.work")
	do := fn(4, "runtime/pprof.Do")
	loc := func(id uint64, f *profile.Function) *profile.Location {
		return &profile.Location{ID: id, Line: []profile.Line{{Function: f}}}
	}
	lHandler, lSleep, lWork, lDo := loc(1, handler), loc(2, sleep), loc(3, work), loc(4, do)
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "delay", Unit: "nanoseconds"}},
		Function:   []*profile.Function{handler, sleep, work, do},
		Location:   []*profile.Location{lHandler, lSleep, lWork, lDo},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{lSleep, lHandler}, Value: []int64{3e9}}, // a CPU profile request waiting out its window
			{Location: []*profile.Location{lWork, lDo}, Value: []int64{5e6}},       // request code run under pprof.Do labels
			{Location: []*profile.Location{lWork}, Value: []int64{1e6}},
		},
	}
	kept, dropped := DropProfilerSamples(p)
	if dropped != 1 || len(kept.Sample) != 2 {
		t.Fatalf("dropped %d, kept %d samples; want 1 and 2", dropped, len(kept.Sample))
	}
	for _, s := range kept.Sample {
		if s.Location[0] != lWork {
			t.Errorf("kept a sample of %s", s.Location[0].Line[0].Function.Name)
		}
	}
	if len(p.Sample) != 3 {
		t.Error("the input profile was changed")
	}
}

// leftpadRun is a run captured by `perfscope profile` from the naive
// leftpad example: its allocation profile holds the allocations of the
// target's pprof handler encoding the profiles the capture asked for.
const leftpadRun = "testdata/leftpad-run"

// leftpad loads the committed leftpad run and opens its profiles of the
// given kinds.
func leftpad(t *testing.T, kinds ...string) (*run.Run, []*profile.Profile) {
	t.Helper()
	saved, err := run.Load(leftpadRun)
	if err != nil {
		t.Fatal(err)
	}
	ps := make([]*profile.Profile, len(kinds))
	for i, kind := range kinds {
		if ps[i], err = saved.Open(kind); err != nil {
			t.Fatal(err)
		}
	}
	return saved, ps
}

// TestAnalyzeLeavesProfilerOut checks that an analysis leaves the
// profiler's own samples out of the profiles it keeps, with or without
// --all, and that the tables' totals are those profiles' totals: what
// diagnosis rules and listings read is what the tables show.
func TestAnalyzeLeavesProfilerOut(t *testing.T) {
	saved, ps := leftpad(t, run.KindAllocs)
	raw := ps[0]
	if _, n := DropProfilerSamples(raw); n == 0 {
		t.Fatal("the committed allocs profile has no samples of the profiler: the test checks nothing")
	}
	for _, all := range []bool{false, true} {
		a, errs := Analyze(ReadRun(saved), Options{All: all})
		if len(errs) > 0 {
			t.Fatalf("all=%v: %v", all, errs)
		}
		for kind, p := range a.Profiles {
			if _, n := DropProfilerSamples(p); n != 0 {
				t.Errorf("all=%v: the %s profile keeps %d samples of the profiler", all, kind, n)
			}
		}
		p := a.Profiles[run.KindAllocs]
		oi, err := SampleIndex(p, SampleAllocObjects)
		if err != nil {
			t.Fatal(err)
		}
		bi, err := SampleIndex(p, SampleAllocSpace)
		if err != nil {
			t.Fatal(err)
		}
		if a.Allocs.Objects != SampleTotal(p, oi) || a.Allocs.Bytes != SampleTotal(p, bi) {
			t.Errorf("all=%v: allocs table totals %d objects, %d bytes; its profile %d, %d",
				all, a.Allocs.Objects, a.Allocs.Bytes, SampleTotal(p, oi), SampleTotal(p, bi))
		}
		bytesIdx, _ := SampleIndex(raw, SampleAllocSpace)
		if a.Allocs.Bytes >= SampleTotal(raw, bytesIdx) {
			t.Errorf("all=%v: %d bytes in the table, %d in the raw profile: the profiler's allocations were kept", all, a.Allocs.Bytes, SampleTotal(raw, bytesIdx))
		}
	}
}
