package profiles

import (
	"testing"

	"github.com/google/pprof/profile"
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
