package bench

import "testing"

func TestProgressFraction(t *testing.T) {
	for _, tc := range []struct {
		p    Progress
		want float64
	}{
		{Progress{Benchmarks: 4, BenchmarkIndex: 1, Round: 1, Rounds: 10}, 0},
		{Progress{Benchmarks: 4, BenchmarkIndex: 1, Round: 10, Rounds: 10, Done: true}, 0.25},
		{Progress{Benchmarks: 4, BenchmarkIndex: 3, Round: 6, Rounds: 10}, 0.625},
		{Progress{Benchmarks: 4, BenchmarkIndex: 4, Round: 10, Rounds: 10, Done: true}, 1},
		// Sub-benchmarks count rounds of their own: never past the whole.
		{Progress{Benchmarks: 2, BenchmarkIndex: 2, Round: 30, Rounds: 10, Done: true}, 1},
		{Progress{Round: 3, Rounds: 10}, 0}, // not counted (the gate's runs)
	} {
		if got := tc.p.Fraction(); got != tc.want {
			t.Errorf("%+v.Fraction() = %v, want %v", tc.p, got, tc.want)
		}
	}
}
