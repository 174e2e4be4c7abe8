package gate

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfscope/perfscope/internal/bench"
)

// TestDecideNoisyEveryMeasure decides a real A/A comparison, the examples'
// benchmarks run twice on the same commit on a moderately loaded machine
// (bench/gate/data/moderate): every measurement the U-test could not
// confirm whose median still moved beyond its threshold is TOO NOISY, for
// B/op and allocs/op as for sec/op, never UNCHANGED. Summary/optimized's
// B/op (780 → 698) and allocs/op (6 → 5) moved in it without a change.
func TestDecideNoisyEveryMeasure(t *testing.T) {
	read := func(name string) *bench.Results {
		t.Helper()
		f, err := os.Open(filepath.Join("..", "..", "bench", "gate", "data", "moderate", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rs, err := bench.Parse(f, name)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	d := Decide(Pair(read("base.txt").Results, read("head.txt").Results), Config{Measure: MeasureTime})
	moved := map[string]int{}
	for _, j := range d.Judgements {
		if j.Exact || j.Verdict == NotGated || j.Verdict == TooFewSamples || j.AdjustedP <= 0.05 || math.Abs(j.Change) <= j.Threshold {
			continue
		}
		moved[j.Unit]++
		if j.Verdict != TooNoisy {
			t.Errorf("%s: median %+.2f%% beyond the %.0f%% threshold, p=%.3f, verdict %q, want %q", j.Measurement, 100*j.Change, 100*j.Threshold, j.P, j.Verdict, TooNoisy)
		}
	}
	for _, unit := range []string{"sec/op", "B/op", "allocs/op"} {
		if moved[unit] == 0 {
			t.Errorf("no %s measurement moved beyond its threshold unconfirmed: the test checks nothing for it", unit)
		}
	}
	t.Logf("unconfirmed moves beyond the threshold: %v", moved)
}
