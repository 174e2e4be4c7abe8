package gate

import (
	"math/rand/v2"
	"testing"
)

// noisy returns n samples around center with ±2% uniform noise.
func noisy(rng *rand.Rand, n int, center float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = center * (1 + 0.04*(rng.Float64()-0.5))
	}
	return xs
}

// spread returns n samples around center with relative uniform noise of
// the given width.
func spread(rng *rand.Rand, n int, center, width float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = center * (1 + width*(rng.Float64()-0.5))
	}
	return xs
}

func constantSample(n int, v float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = v
	}
	return xs
}

func TestDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name string
		ms   []Measurement
		cfg  Config
		want []Verdict
		exit int
	}{
		{
			name: "unchanged",
			ms: []Measurement{
				{Benchmark: "A", Unit: "sec/op", Base: noisy(rng, 10, 100), Head: noisy(rng, 10, 100)},
				{Benchmark: "A", Unit: "allocs/op", Base: constantSample(10, 3), Head: constantSample(10, 3)},
			},
			want: []Verdict{Unchanged, Unchanged},
		},
		{
			// Medians 11 → 15 B/op in samples that cross: the shift
			// is not confirmed, so it is not "unchanged" either.
			name: "noisy B/op moved beyond its threshold",
			ms: []Measurement{
				{Benchmark: "A", Unit: "B/op", Base: []float64{11, 15, 11, 15, 11, 11, 15, 11, 15, 11}, Head: []float64{15, 11, 15, 11, 15, 15, 11, 15, 11, 15}},
				{Benchmark: "B", Unit: "B/op", Base: []float64{11, 15, 11, 15, 11, 11, 15, 11, 15, 11}, Head: []float64{11, 15, 11, 15, 11, 11, 15, 11, 15, 11}},
			},
			want: []Verdict{TooNoisy, Unchanged},
			exit: 2,
		},
		{
			name: "3x slower and more allocations",
			ms: []Measurement{
				{Benchmark: "A", Unit: "sec/op", Base: noisy(rng, 10, 100), Head: noisy(rng, 10, 300)},
				{Benchmark: "A", Unit: "allocs/op", Base: constantSample(10, 3), Head: constantSample(10, 4)},
				{Benchmark: "B", Unit: "sec/op", Base: noisy(rng, 10, 100), Head: noisy(rng, 10, 100)},
			},
			want: []Verdict{Regression, Regression, Unchanged},
			exit: 1,
		},
		{
			name: "significant but below threshold",
			ms: []Measurement{
				{Benchmark: "A", Unit: "sec/op", Base: constantPlusTiny(10, 100, 0), Head: constantPlusTiny(10, 101, 0)},
			},
			want: []Verdict{Unchanged},
		},
		{
			name: "faster is an improvement",
			ms: []Measurement{
				{Benchmark: "A", Unit: "sec/op", Base: noisy(rng, 10, 300), Head: noisy(rng, 10, 100)},
			},
			want: []Verdict{Improvement},
		},
		{
			name: "throughput lower is worse",
			ms: []Measurement{
				{Benchmark: "A", Unit: "B/s", Base: noisy(rng, 10, 300), Head: noisy(rng, 10, 100)},
			},
			cfg:  Config{Thresholds: map[string]float64{"B/s": 5}},
			want: []Verdict{Regression},
			exit: 1,
		},
		{
			name: "too noisy to see the threshold",
			ms: []Measurement{
				{Benchmark: "A", Unit: "sec/op", Base: spread(rng, 20, 100, 1.0), Head: spread(rng, 20, 100, 1.0)},
			},
			want: []Verdict{TooNoisy},
			exit: 2,
		},
		{
			name: "too few rounds",
			ms: []Measurement{
				{Benchmark: "A", Unit: "sec/op", Base: noisy(rng, 3, 100), Head: noisy(rng, 3, 300)},
			},
			want: []Verdict{TooFewSamples},
			exit: 2,
		},
		{
			name: "added, removed and ungated units",
			ms: []Measurement{
				{Benchmark: "New", Unit: "sec/op", Head: noisy(rng, 10, 100)},
				{Benchmark: "Old", Unit: "sec/op", Base: noisy(rng, 10, 100)},
				{Benchmark: "A", Unit: "widgets/op", Base: noisy(rng, 10, 100), Head: noisy(rng, 10, 300)},
			},
			want: []Verdict{Added, Removed, NotGated},
		},
		{
			name: "a threshold on a unit of unknown direction",
			ms: []Measurement{
				{Benchmark: "A", Unit: "widgets/op", Base: noisy(rng, 10, 100), Head: noisy(rng, 10, 300)},
			},
			cfg:  Config{Thresholds: map[string]float64{"widgets/op": 5}},
			want: []Verdict{NotGated},
		},
		{
			name: "allocations from none",
			ms: []Measurement{
				{Benchmark: "A", Unit: "allocs/op", Base: []float64{0, 0, 0}, Head: []float64{2, 2, 2}},
			},
			want: []Verdict{Regression},
			exit: 1,
		},
		{
			name: "per-benchmark rules",
			ms: []Measurement{
				{Benchmark: "Loose/n=1-2", Unit: "sec/op", Base: noisy(rng, 10, 100), Head: noisy(rng, 10, 150)},
				{Benchmark: "Flaky-2", Unit: "sec/op", Base: noisy(rng, 10, 100), Head: noisy(rng, 10, 300)},
				{Benchmark: "Strict-2", Unit: "sec/op", Base: noisy(rng, 10, 100), Head: noisy(rng, 10, 150)},
			},
			cfg: Config{Benchmarks: []BenchmarkRule{
				{Name: "BenchmarkLoose/.*", Threshold: ptr(60.0)},
				{Name: "Flaky", Ignore: true},
			}},
			want: []Verdict{Unchanged, NotGated, Regression},
			exit: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.ms, tc.cfg)
			if len(d.Judgements) != len(tc.want) {
				t.Fatalf("got %d judgements, want %d", len(d.Judgements), len(tc.want))
			}
			for i, j := range d.Judgements {
				if j.Verdict != tc.want[i] {
					t.Errorf("%s: verdict %q, want %q (p=%.4g adj=%.4g change=%+.2f%%)", j.Measurement, j.Verdict, tc.want[i], j.P, j.AdjustedP, 100*j.Change)
				}
			}
			if got := d.ExitCode(); got != tc.exit {
				t.Errorf("exit code %d, want %d", got, tc.exit)
			}
		})
	}
}

// constantPlusTiny is a sample that differs significantly but by little:
// v, v+0.001, v+0.002, ...
func constantPlusTiny(n int, v, _ float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = v + 0.001*float64(i)
	}
	return xs
}

func ptr[T any](v T) *T { return &v }

// TestHolm checks the correction on a family where uncorrected tests
// would reject too much: twenty measurements, each with one weak
// difference, must not all fail.
func TestHolm(t *testing.T) {
	var ms []Measurement
	for i := range 20 {
		base := []float64{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}
		head := []float64{104, 105, 106, 107, 108, 109, 110, 111, 112, 113}
		ms = append(ms, Measurement{Benchmark: string(rune('A' + i)), Unit: "sec/op", Base: base, Head: head})
	}
	d := Decide(ms, Config{Alpha: 0.05})
	j := d.Judgements[0]
	if j.P >= 0.05 {
		t.Fatalf("uncorrected p %.4f should be significant for this test to mean anything", j.P)
	}
	if d.Regressions != 0 || j.AdjustedP < 0.05 {
		t.Errorf("got %d regressions, adjusted p %.4f; want none after Holm over %d tests", d.Regressions, j.AdjustedP, d.Tests)
	}
	if d.Tests != 20 {
		t.Errorf("family of %d tests, want 20", d.Tests)
	}
}

func TestNeedsMoreRounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	quiet := Decide([]Measurement{{Benchmark: "A", Unit: "sec/op", Base: noisy(rng, 20, 100), Head: noisy(rng, 20, 100)}}, Config{})
	if quiet.NeedsMoreRounds() {
		t.Error("quiet samples need no more rounds")
	}
	loud := Decide([]Measurement{{Benchmark: "A", Unit: "sec/op", Base: spread(rng, 20, 100, 1), Head: spread(rng, 20, 100, 1)}}, Config{})
	if !loud.NeedsMoreRounds() {
		t.Error("noisy samples need more rounds")
	}
	few := Decide([]Measurement{{Benchmark: "A", Unit: "sec/op", Base: noisy(rng, 3, 100), Head: noisy(rng, 3, 100)}}, Config{})
	if !few.NeedsMoreRounds() {
		t.Error("three samples need more rounds")
	}
}

func TestMoreRounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	loud := Decide([]Measurement{{Benchmark: "A", Unit: "sec/op", Base: spread(rng, 20, 100, 1), Head: spread(rng, 20, 100, 1)}}, Config{})
	cfg := Config{}
	for _, tc := range []struct{ done, want int }{{20, 10}, {30, 10}, {35, 5}, {40, 0}} {
		if got := cfg.MoreRounds(tc.done, loud); got != tc.want {
			t.Errorf("after %d noisy rounds: %d more, want %d", tc.done, got, tc.want)
		}
	}
	quiet := Decide([]Measurement{{Benchmark: "A", Unit: "sec/op", Base: noisy(rng, 20, 100), Head: noisy(rng, 20, 100)}}, Config{})
	if got := cfg.MoreRounds(20, quiet); got != 0 {
		t.Errorf("quiet: %d more rounds, want 0", got)
	}
}

// TestDecideExact checks the decisions on exact measures: instruction
// counts at the threshold's edges, allocations on any increase, a pure
// improvement, benchmarks on one side only, and wall time that is too
// noisy to decide, which fails only a strict gate.
func TestDecideExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	instr := func(name string, base, head float64) Measurement {
		// Repeated counts differ by a few hundredths of a percent.
		return Measurement{Benchmark: name, Unit: "instructions/op", Base: []float64{base, base * 1.0002}, Head: []float64{head, head * 0.9998}}
	}
	tests := []struct {
		name   string
		ms     []Measurement
		strict bool
		want   []Verdict
		exit   int
	}{
		{
			name: "within the 1% threshold",
			ms:   []Measurement{instr("A", 1e6, 1.009e6), instr("B", 1e6, 0.991e6)},
			want: []Verdict{Unchanged, Unchanged},
		},
		{
			name: "just beyond the threshold",
			ms:   []Measurement{instr("A", 1e6, 1.0105e6)},
			want: []Verdict{Regression},
			exit: 1,
		},
		{
			name: "pure improvement passes",
			ms: []Measurement{
				instr("A", 1e6, 0.9e6),
				{Benchmark: "A", Unit: "allocs/op", Base: []float64{3, 3, 3}, Head: []float64{2, 2, 2}},
				{Benchmark: "A", Unit: "B/op", Base: []float64{96, 96, 96}, Head: []float64{64, 64, 64}},
			},
			want: []Verdict{Improvement, Improvement, Improvement},
		},
		{
			name: "one more allocation in five rounds",
			ms: []Measurement{
				instr("A", 1e6, 1e6),
				{Benchmark: "A", Unit: "allocs/op", Base: []float64{3, 3, 3, 3, 3}, Head: []float64{4, 4, 4, 4, 4}},
			},
			want: []Verdict{Unchanged, Regression},
			exit: 1,
		},
		{
			name: "varying allocations go to the U-test",
			ms: []Measurement{
				{Benchmark: "P", Unit: "B/op", Base: []float64{96, 97, 96}, Head: []float64{97, 96, 98}},
			},
			want: []Verdict{TooFewSamples},
		},
		{
			name: "counts that disagree are too noisy, not a regression",
			ms: []Measurement{
				{Benchmark: "Handler", Unit: "instructions/op", Base: []float64{62.4e3, 63.2e3}, Head: []float64{64.1e3, 61.9e3}},
			},
			want: []Verdict{TooNoisy},
		},
		{
			name: "one side only is listed, not failed",
			ms: []Measurement{
				{Benchmark: "New", Unit: "instructions/op", Head: []float64{5e5, 5e5}},
				{Benchmark: "Old", Unit: "instructions/op", Base: []float64{5e5, 5e5}},
			},
			want: []Verdict{Added, Removed},
		},
		{
			name: "noisy wall time beside counts",
			ms: []Measurement{
				instr("A", 1e6, 1e6),
				{Benchmark: "A", Unit: "sec/op", Base: spread(rng, 5, 100, 1), Head: spread(rng, 5, 100, 1)},
			},
			want: []Verdict{Unchanged, TooNoisy},
		},
		{
			name:   "noisy wall time, strict",
			ms:     []Measurement{{Benchmark: "A", Unit: "sec/op", Base: spread(rng, 5, 100, 1), Head: spread(rng, 5, 100, 1)}},
			strict: true,
			want:   []Verdict{TooNoisy},
			exit:   2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.ms, Config{Measure: MeasureInstructions, Strict: tc.strict, Alpha: 0.05})
			if len(d.Judgements) != len(tc.want) {
				t.Fatalf("got %d judgements, want %d", len(d.Judgements), len(tc.want))
			}
			for i, j := range d.Judgements {
				if j.Verdict != tc.want[i] {
					t.Errorf("%s: verdict %q, want %q (change %+.3f%%)", j.Measurement, j.Verdict, tc.want[i], 100*j.Change)
				}
				if j.Unit == "instructions/op" && j.Verdict != Added && j.Verdict != Removed && !j.Exact {
					t.Errorf("%s: not judged as exact", j.Measurement)
				}
			}
			if got := d.ExitCode(); got != tc.exit {
				t.Errorf("exit code %d, want %d", got, tc.exit)
			}
		})
	}
	// Measuring time alone, an undecided measurement fails as before.
	d := Decide([]Measurement{{Benchmark: "A", Unit: "sec/op", Base: spread(rng, 5, 100, 1), Head: spread(rng, 5, 100, 1)}}, Config{Measure: MeasureTime})
	if d.ExitCode() != 2 {
		t.Errorf("time alone, too noisy: exit %d, want 2", d.ExitCode())
	}
}
