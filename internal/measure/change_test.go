package measure

import (
	"math"
	"testing"
)

func TestChange(t *testing.T) {
	for _, tc := range []struct {
		base, head, want float64
		text             string
	}{
		{2522, 20413, 20413.0/2522 - 1, "+709.4%"},
		{100, 50, -0.5, "-50.0%"},
		{3, 3, 0, "0.0%"},
		{0, 0, 0, "0.0%"},
		{0, 2, math.Inf(1), "from 0"},
		{0, -2, math.Inf(-1), "from 0"},
		{2, 0, -1, "-100.0%"},
		{2048, 2049, 1.0 / 2048, "+0.05%"},
	} {
		got := Change(tc.base, tc.head)
		if got != tc.want {
			t.Errorf("Change(%v, %v) = %v, want %v", tc.base, tc.head, got, tc.want)
		}
		if s := FormatChange(got); s != tc.text {
			t.Errorf("FormatChange(Change(%v, %v)) = %q, want %q", tc.base, tc.head, s, tc.text)
		}
	}
	for c, want := range map[float64]string{2: "+200.00%", -0.0244: "-2.44%", 0: "+0.00%", math.Inf(1): "from 0"} {
		if s := TableChange(c); s != want {
			t.Errorf("TableChange(%v) = %q, want %q", c, s, want)
		}
	}
	if s := FormatChange(math.NaN()); s != "?" {
		t.Errorf("FormatChange(NaN) = %q", s)
	}
}

func TestCenter(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		// The cpu-ns/op of BenchmarkHandler/naive-2 in
		// bench/gate/data/quiet/base.txt's first rounds.
		{[]float64{38349, 26745, 30101}, 30101},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
	} {
		in := append([]float64(nil), tc.xs...)
		if got := Center(in); got != tc.want {
			t.Errorf("Center(%v) = %v, want %v", tc.xs, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.xs[i] {
				t.Fatalf("Center reordered its input: %v", in)
			}
		}
	}
	if !math.IsNaN(Center(nil)) {
		t.Error("Center of no values is not NaN")
	}
}

func TestConstant(t *testing.T) {
	for _, tc := range []struct {
		samples [][]float64
		want    bool
	}{
		{[][]float64{{88, 88, 88}}, true},
		{[][]float64{{88, 88}, {88}}, true},
		{[][]float64{{88, 88}, {9, 9}}, false},
		{[][]float64{{10952, 10948}}, false},
		{[][]float64{{}, {1}}, true},
		{nil, false},
		{[][]float64{{}}, false},
	} {
		if got := Constant(tc.samples...); got != tc.want {
			t.Errorf("Constant(%v) = %v, want %v", tc.samples, got, tc.want)
		}
	}
}
