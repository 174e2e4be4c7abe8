package bench

import (
	"context"
	"math"
	"slices"
	"testing"
)

// TestInstructionProfileRoundTrip encodes the per-operation profile of
// the real runs of 2 and 10 operations and reads it back: the same lines,
// functions, text and total, exactly; with caps small enough to cut, the
// functions kept and the total stay exact.
func TestInstructionProfileRoundTrip(t *testing.T) {
	short, long := readCachegrindFixture(t, "work-2x.out"), readCachegrindFixture(t, "work-10x.out")
	c := InstructionCount{N: 8, PerOp: float64(long.Total-short.Total) / 8, Profile: opProfile(short, long, 8, "")}
	c.Profile.Source[SourceLine{Func: "example.com/cgx.hot", File: "/tmp/cgx/work_test.go", Line: 11}] = "s += i % 7"
	data, err := EncodeInstructionProfile(&CountedBenchmark{Counts: []InstructionCount{c}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseInstructionProfile(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := CountsOfProfile(p)
	if err != nil || len(counts) != 1 {
		t.Fatalf("%d counts (%v), want 1", len(counts), err)
	}
	got := counts[0]
	if got.N != 8 || got.PerOp != c.PerOp || len(got.Profile.Lines) != len(c.Profile.Lines) || len(got.Profile.Funcs) != len(c.Profile.Funcs) {
		t.Fatalf("read back N %d, %v an operation, %d lines, %d functions; want 8, %v, %d, %d",
			got.N, got.PerOp, len(got.Profile.Lines), len(got.Profile.Funcs), c.PerOp, len(c.Profile.Lines), len(c.Profile.Funcs))
	}
	for l, v := range c.Profile.Lines {
		if got.Profile.Lines[l] != v {
			t.Errorf("%v: %v, want %v", l, got.Profile.Lines[l], v)
		}
	}
	for fn, v := range c.Profile.Funcs {
		if math.Abs(got.Profile.Funcs[fn]-v) > 1e-9*math.Abs(v) {
			t.Errorf("%s: %v, want %v", fn, got.Profile.Funcs[fn], v)
		}
	}
	if src := got.Profile.Source[SourceLine{Func: "example.com/cgx.hot", File: "/tmp/cgx/work_test.go", Line: 11}]; src != "s += i % 7" {
		t.Errorf("the loop's line reads %q", src)
	}

	// Cut to 3 lines and 2 functions: hot first, everything else in
	// "(other functions)", the total unchanged.
	b := newProfileBuilder()
	b.addCount(1, c, 3, 2)
	cut, err := CountsOfProfile(b.p)
	if err != nil {
		t.Fatal(err)
	}
	if f := cut[0].Profile.Funcs; len(f) != 2 || f["example.com/cgx.hot"] != 28007 || cut[0].PerOp != c.PerOp {
		t.Errorf("cut: functions %v, %v an operation; want hot's 28007 and the rest, %v", f, cut[0].PerOp, c.PerOp)
	}

	per, err := PerOperation(p)
	if err != nil {
		t.Fatal(err)
	}
	var hot int64
	for _, s := range per.Sample {
		if s.Location[0].Line[0].Function.Name == "example.com/cgx.hot" {
			hot += s.Value[0]
		}
	}
	if hot != 28007 {
		t.Errorf("per operation, hot has %d instructions, want 28007", hot)
	}
	if _, err := ParseInstructionProfile(context.Background(), []byte("not a profile")); err == nil {
		t.Error("read garbage as a profile")
	}
}

// TestMiddleCounts checks which counts explain a median: the middle one
// of an odd number, the two middle ones of an even number, only counts
// with a profile, none of none.
func TestMiddleCounts(t *testing.T) {
	count := func(perOp float64, profiled bool) InstructionCount {
		c := InstructionCount{PerOp: perOp}
		if profiled {
			c.Profile = &OpProfile{Funcs: map[string]float64{"f": perOp}}
		}
		return c
	}
	perOps := func(cs []InstructionCount) []float64 {
		var out []float64
		for _, c := range cs {
			out = append(out, c.PerOp)
		}
		return out
	}
	for _, tc := range []struct {
		counts []InstructionCount
		want   []float64
	}{
		{[]InstructionCount{count(100, true)}, []float64{100}},
		// One run the scheduler added to is left out.
		{[]InstructionCount{count(100, true), count(128, true), count(100, true), count(100, true), count(99, true)}, []float64{100}},
		{[]InstructionCount{count(130, true), count(100, true), count(120, true), count(110, true)}, []float64{110, 120}},
		// A count without a profile cannot explain anything.
		{[]InstructionCount{count(100, true), count(300, false), count(200, true)}, []float64{100, 200}},
		{[]InstructionCount{count(100, false)}, nil},
		{nil, nil},
	} {
		if got := perOps(MiddleCounts(tc.counts)); !slices.Equal(got, tc.want) {
			t.Errorf("middle of %v: %v, want %v", perOps(tc.counts), got, tc.want)
		}
	}
}
