package history

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/perf/benchmath"

	"github.com/perfscope/perfscope/internal/measure"
)

// checkUTest compares the memo's answer for samples x and y with
// benchmath's, to the bit.
func checkUTest(t *testing.T, m *uTestMemo, x, y []float64, alpha float64) {
	t.Helper()
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	s1 := benchmath.NewSample(slices.Clone(x), th)
	s2 := benchmath.NewSample(slices.Clone(y), th)
	got := m.compare(s1, s2)
	want := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(x), th), benchmath.NewSample(slices.Clone(y), th))
	if math.Float64bits(got.P) != math.Float64bits(want.P) || got.N1 != want.N1 || got.N2 != want.N2 ||
		math.Float64bits(got.Alpha) != math.Float64bits(want.Alpha) || !sameErrors(got.Warnings, want.Warnings) {
		t.Fatalf("U test of %v and %v at alpha %v:\n got %+v\nwant %+v", x, y, alpha, got, want)
	}
}

func sameErrors(a, b []error) bool {
	return slices.EqualFunc(a, b, func(x, y error) bool { return x.Error() == y.Error() })
}

// TestUTestMemoMatchesBenchmath runs many U tests through one memo, so most
// answers are hits on keys that other samples made: each must be exactly
// benchmath's answer for the samples at hand.
func TestUTestMemoMatchesBenchmath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Value generators: continuous (no ties), a few integers (many
	// ties), and a mix with infinities and signed zeros.
	gens := map[string]func() float64{
		"continuous": func() float64 { return 100 * (1 + 0.05*rng.NormFloat64()) },
		"integers":   func() float64 { return float64(rng.IntN(6)) },
		"mixed": func() float64 {
			vals := []float64{math.Inf(-1), -1, math.Copysign(0, -1), 0, 0.5, 1, 1e300, math.Inf(1)}
			if rng.IntN(2) == 0 {
				return vals[rng.IntN(len(vals))]
			}
			return rng.Float64()
		},
	}
	// Sizes cover the exact distribution with and without ties and
	// the normal approximation beyond the exact limits.
	sizes := []int{1, 2, 3, 4, 5, 6, 8, 10, 12, 20, 25, 26, 30, 50, 51, 60}
	for name, gen := range gens {
		t.Run(name, func(t *testing.T) {
			m := newUTestMemo()
			sample := func(n int, shift float64) []float64 {
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = gen() + shift
				}
				return xs
			}
			for range 3000 {
				n1, n2 := sizes[rng.IntN(len(sizes))], sizes[rng.IntN(len(sizes))]
				if rng.IntN(2) == 0 {
					n2 = n1 // the usual case: the same -count on both sides
				}
				shift := 0.0
				if rng.IntN(3) == 0 {
					shift = float64(rng.IntN(3)) * 5
				}
				alpha := 0.05
				if rng.IntN(4) == 0 {
					alpha = []float64{0.01, 0.1, 1e-6}[rng.IntN(3)]
				}
				checkUTest(t, m, sample(n1, 0), sample(n2, shift), alpha)
			}
		})
	}
}

// TestUTestMemoShares checks that samples of one size without ties need at
// most one computation per value of the smaller U statistic.
func TestUTestMemoShares(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := newUTestMemo()
	for range 2000 {
		x, y := make([]float64, 10), make([]float64, 10)
		for i := range x {
			x[i], y[i] = rng.Float64(), rng.Float64()+0.1
		}
		checkUTest(t, m, x, y, 0.05)
	}
	if n := len(m.results); n > 51 {
		t.Errorf("%d distinct tests memoized for samples of 10; U ranges over 0…50", n)
	}
}

// TestUTestMemoEdgeCases covers the inputs benchmath answers with a
// warning or an error instead of a p-value.
func TestUTestMemoEdgeCases(t *testing.T) {
	m := newUTestMemo()
	for _, tc := range []struct{ x, y []float64 }{
		{[]float64{1}, []float64{2}},                   // too few samples to ever be significant
		{[]float64{1, 1, 1}, []float64{1, 1}},          // all equal: the test has nothing to rank
		{[]float64{1, 2, 3}, []float64{1, 2, 3}},       // U1 == U2
		{[]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}}, // extreme U
		{[]float64{5, 6, 7, 8}, []float64{1, 2, 3, 4}}, // the mirror
		{[]float64{1, 1, 2, 2}, []float64{2, 2, 3, 3}},
		{[]float64{math.Inf(-1), 0}, []float64{math.Copysign(0, -1), math.Inf(1)}},
	} {
		for range 2 { // a miss, then a hit
			checkUTest(t, m, tc.x, tc.y, 0.05)
			checkUTest(t, m, tc.y, tc.x, 0.05)
		}
	}
}

// TestDetectChangesUsesBenchmathP checks the p-values of a long history,
// where nearly every U test comes from the memo, against benchmath's.
func TestDetectChangesUsesBenchmathP(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tied := range []bool{false, true} {
		var points []Point
		level := 100.0
		for c := range 2000 {
			if c%200 == 0 {
				level *= 1 + 0.3*(rng.Float64()-0.5)
			}
			vals := make([]float64, 10)
			for i := range vals {
				vals[i] = level * (1 + 0.02*rng.NormFloat64())
				if tied {
					vals[i] = math.Round(vals[i] / 2)
				}
			}
			points = append(points, Point{Commit: "c", Values: vals})
		}
		h := DetectChanges("sec/op", points, Options{})
		th := &benchmath.Thresholds{CompareAlpha: 0.05}
		for i := 1; i < len(h.Commits); i++ {
			a := benchmath.NewSample(slices.Clone(points[i-1].Values), th)
			b := benchmath.NewSample(slices.Clone(points[i].Values), th)
			want := 1.0
			if !measure.Constant(a.Values, b.Values) {
				want = benchmath.AssumeNothing.Compare(a, b).P
			}
			if got := h.Commits[i].P; math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("tied=%v commit %d: P = %v, benchmath says %v", tied, i, got, want)
			}
		}
	}
}

// fuzzValues are the values FuzzUTestMemo draws from: few enough to tie
// often, with the extremes and both zeros. NaN is left out: benchmath
// does not terminate on it.
var fuzzValues = []float64{
	math.Inf(-1), -1e300, -3, -1, -0.5, math.Copysign(0, -1), 0, 1e-300,
	0.5, 1, 1.5, 2, 3, 10, 1e300, math.Inf(1),
}

// FuzzUTestMemo checks the memo against benchmath on arbitrary samples,
// and checks that the key captures everything the result depends on: a
// strictly increasing transformation of both samples keeps the key, so
// its answer is a memo hit that must still be benchmath's.
func FuzzUTestMemo(f *testing.F) {
	f.Add(uint8(3), []byte{0, 1, 2, 3, 4, 5})
	f.Add(uint8(10), []byte("0123456789abcdefghij"))
	f.Add(uint8(2), []byte{7, 7, 7, 7})
	f.Add(uint8(5), []byte{9, 9, 1, 1, 2, 9, 9, 3, 3, 3, 8})
	f.Add(uint8(30), []byte("the quick brown fox jumps over the lazy dog, twice: the quick brown fox"))
	f.Fuzz(func(t *testing.T, split uint8, data []byte) {
		if len(data) > 120 {
			data = data[:120]
		}
		vals := make([]float64, len(data))
		for i, b := range data {
			if b >= 128 {
				// Continuous-ish values: few ties.
				vals[i] = float64(b) + float64(i)/1024
			} else {
				vals[i] = fuzzValues[int(b)%len(fuzzValues)]
			}
		}
		k := min(int(split), len(vals))
		x, y := vals[:k], vals[k:]
		m := newUTestMemo()
		checkUTest(t, m, x, y, 0.05)
		checkUTest(t, m, y, x, 0.05)
		// Both transformations keep the order; 2v+1 keeps ties too
		// (and so the key) except where it rounds, arctan makes far
		// values tie. Either way the answer must be benchmath's.
		for _, tr := range []func(float64) float64{
			func(v float64) float64 { return math.Atan(v) },
			func(v float64) float64 {
				if math.Abs(v) > 1e307 {
					return v
				}
				return 2*v + 1
			},
		} {
			tx, ty := apply(x, tr), apply(y, tr)
			checkUTest(t, m, tx, ty, 0.05)
			checkUTest(t, m, ty, tx, 0.05)
		}
	})
}

func apply(xs []float64, f func(float64) float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
