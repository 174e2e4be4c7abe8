package history

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// historyFixture reads testdata/history-sortints.txt: 30 separate runs of a
// real benchmark (sorting 256 ints, -count=10 -benchtime=50ms) on a shared,
// heavily loaded 2-core VM, each under a "commit:" line. Nothing changed
// between the runs, so all the variation in it is noise, and a lot of it:
// unchanged medians range over 3×, the worst case a CI runner gives. It
// returns each unit's points in commit order.
func historyFixture(t *testing.T) map[string][]Point {
	t.Helper()
	out := readPoints(t, "testdata/history-sortints.txt", func(_ *benchfmt.Result, unit string) string { return unit })
	if len(out["sec/op"]) != 30 {
		t.Fatalf("fixture has %d commits of sec/op, want 30", len(out["sec/op"]))
	}
	return out
}

// readPoints reads a benchmark file whose results follow "commit:" lines
// and returns the points of each series, in commit order, keyed by key;
// values whose key is "" are left out.
func readPoints(t *testing.T, path string, key func(r *benchfmt.Result, unit string) string) map[string][]Point {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := benchfmt.NewReader(f, f.Name())
	out := make(map[string][]Point)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		commit := res.GetConfig("commit")
		for _, v := range res.Values {
			k := key(res, v.Unit)
			if k == "" {
				continue
			}
			ps := out[k]
			if len(ps) == 0 || ps[len(ps)-1].Commit != commit {
				ps = append(ps, Point{Commit: commit})
			}
			ps[len(ps)-1].Values = append(ps[len(ps)-1].Values, v.Value)
			out[k] = ps
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// scaled returns a copy of ps with the values of commits from..to-1
// multiplied by k: an injected change.
func scaled(ps []Point, from, to int, k float64) []Point {
	out := make([]Point, len(ps))
	for i, p := range ps {
		p.Values = slices.Clone(p.Values)
		if i >= from && i < to {
			for j := range p.Values {
				p.Values[j] *= k
			}
		}
		out[i] = p
	}
	return out
}

// changed lists the indexes of the commits marked changed.
func changed(h Detection) []int {
	var idx []int
	for i, c := range h.Commits {
		if c.Changed {
			idx = append(idx, i)
		}
	}
	return idx
}

func TestHistoryRealNoiseIsNotAChange(t *testing.T) {
	for unit, ps := range historyFixture(t) {
		h := DetectChanges(unit, ps, Options{})
		if got := changed(h); len(got) != 0 {
			t.Errorf("%s: unchanged code marked changed at %v (noise %.3f)", unit, got, h.Noise)
		}
		if len(h.Commits) != 30 || h.Commits[0].Compared || !h.Commits[1].Compared {
			t.Errorf("%s: %d commits, first compared %v", unit, len(h.Commits), h.Commits[0].Compared)
		}
	}
}

func TestHistoryStepIsDetected(t *testing.T) {
	ps := historyFixture(t)["sec/op"]
	threshold := DetectChanges("sec/op", ps, Options{}).Threshold
	// A step of twice the threshold (on the log scale the threshold
	// uses), so it is a clear change whatever this fixture's noise is.
	step := (1 + threshold) * (1 + threshold)
	for _, tc := range []struct {
		name   string
		k      float64
		better int
	}{
		{"slower", step, -1},
		{"faster", 1 / step, +1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := DetectChanges("sec/op", scaled(ps, 20, 30, tc.k), Options{})
			if got := changed(h); !slices.Equal(got, []int{20}) {
				t.Fatalf("step of ×%.3f at commit 20: marked %v (noise %.3f, threshold %.3f)", tc.k, got, h.Noise, h.Threshold)
			}
			c := h.Commits[20]
			if c.Better != tc.better || c.P > 0.05 || math.Abs(math.Log1p(c.Delta)-math.Log(tc.k)) > math.Log1p(h.Threshold) {
				t.Errorf("commit 20: %+v", c)
			}
		})
	}
}

// TestHistoryRunToRunNoise is the reason for the noise threshold: every run
// of this benchmark is shifted by up to ±3%, as on a machine whose speed
// drifts between runs. The U test calls most adjacent pairs different; the
// history must not.
func TestHistoryRunToRunNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var ps []Point
	for c := range 60 {
		shift := 1 + 0.06*(rng.Float64()-0.5)
		p := Point{Commit: string(rune('A' + c))}
		for range 10 {
			p.Values = append(p.Values, 1000*shift*(1+0.002*rng.NormFloat64()))
		}
		ps = append(ps, p)
	}
	h := DetectChanges("sec/op", ps, Options{})
	significant := 0
	for _, c := range h.Commits {
		if c.Compared && c.P <= 0.05 {
			significant++
		}
	}
	if significant < 30 {
		t.Errorf("only %d of 59 adjacent pairs differ by the U test; the fixture is meant to fool it", significant)
	}
	if got := changed(h); len(got) != 0 {
		t.Errorf("run-to-run drift marked as changes at %v (noise %.4f)", got, h.Noise)
	}
	// A real 15% step in the same drift is still found.
	h = DetectChanges("sec/op", scaled(ps, 40, 60, 1.15), Options{})
	if got := changed(h); !slices.Equal(got, []int{40}) {
		t.Errorf("15%% step at 40 in drift: marked %v (threshold %.4f)", got, h.Threshold)
	}
}

func TestHistoryExactUnits(t *testing.T) {
	// allocs/op does not vary at all: any change of it is real, however
	// small relative to the metric.
	allocs := historyFixture(t)["allocs/op"]
	h := DetectChanges("allocs/op", scaled(allocs, 25, 30, 2), Options{})
	if got := changed(h); !slices.Equal(got, []int{25}) || h.Noise != 0 || h.Commits[25].Better != -1 {
		t.Errorf("allocs 1 → 2 at commit 25: marked %v, noise %v, better %d", got, h.Noise, h.Commits[25].Better)
	}
	// From zero the relative change is infinite, and still a change.
	zero := scaled(allocs, 0, 25, 0)
	h = DetectChanges("allocs/op", zero, Options{})
	if got := changed(h); !slices.Equal(got, []int{25}) || !math.IsInf(h.Commits[25].Delta, 1) {
		t.Errorf("allocs 0 → 1 at commit 25: marked %v, delta %v", got, h.Commits[25].Delta)
	}
}

func TestHistoryTooLittleData(t *testing.T) {
	ps := historyFixture(t)["sec/op"]
	// Four commits with a big step: too few to know the noise.
	h := DetectChanges("sec/op", scaled(ps[:4], 2, 4, 3), Options{})
	if got := changed(h); len(got) != 0 || len(h.Warnings) == 0 || !math.IsNaN(h.Noise) {
		t.Errorf("4 commits: marked %v, warnings %v, noise %v", got, h.Warnings, h.Noise)
	}
	// One sample per commit: the U test can never be sure, and says so.
	var single []Point
	for _, p := range ps {
		single = append(single, Point{Commit: p.Commit, Values: p.Values[:1]})
	}
	h = DetectChanges("sec/op", scaled(single, 15, 30, 10), Options{})
	if got := changed(h); len(got) != 0 || len(h.Warnings) == 0 {
		t.Errorf("one sample per commit: marked %v, warnings %v", got, h.Warnings)
	}
	// Empty points are skipped, and the input is left as it was.
	in := []Point{{Commit: "a", Values: []float64{3, 1, 2}}, {Commit: "b"}}
	h = DetectChanges("sec/op", in, Options{})
	if len(h.Commits) != 1 || !slices.Equal(in[0].Values, []float64{3, 1, 2}) || h.Commits[0].Summary.Center != 2 {
		t.Errorf("got %+v, input now %v", h.Commits, in[0].Values)
	}
}

// TestHistoryExactInstructions reads testdata/history-instructions.txt:
// six commits of a scratch module, each recorded by "perfscope bench
// --measure instructions". Commits 1, 2, 4 and 5 change only a comment;
// commit 3 makes BenchmarkLoop's loop 2% longer. Only that commit's
// instructions/op may be marked, and only for Loop.
func TestHistoryExactInstructions(t *testing.T) {
	series := readPoints(t, "testdata/history-instructions.txt", func(r *benchfmt.Result, unit string) string {
		if unit != "instructions/op" {
			return ""
		}
		return string(r.Name)
	})
	for _, name := range []string{"Loop-2", "Steady-2"} {
		ps := series[name]
		if len(ps) != 6 {
			t.Fatalf("%s: %d commits of instructions/op, want 6", name, len(ps))
		}
		h := DetectChanges("instructions/op", ps, Options{})
		var want []int
		if name == "Loop-2" {
			want = []int{3}
		}
		if got := changed(h); !slices.Equal(got, want) {
			t.Errorf("%s: changed at %v, want %v", name, got, want)
		}
		if name == "Loop-2" && (h.Commits[3].Better != -1 || h.Commits[3].Delta < 0.015 || h.Commits[3].Delta > 0.025) {
			t.Errorf("%s: the 2%% longer loop: delta %+.4f, better %d", name, h.Commits[3].Delta, h.Commits[3].Better)
		}
	}
}

// TestHistoryAllocationStepFromSecondCommit: a step of an allocation unit
// whose samples do not overlap is marked however short the series, while
// allocation counts that wobble within each commit are left to the noise
// rule.
func TestHistoryAllocationStepFromSecondCommit(t *testing.T) {
	five := func(vs ...float64) []float64 { return vs }
	for _, tc := range []struct {
		name   string
		unit   string
		points [][]float64
		want   []int
	}{
		{"allocs 1 → 2", "allocs/op", [][]float64{five(1, 1, 1, 1, 1), five(2, 2, 2, 2, 2)}, []int{1}},
		{"bytes down", "B/op", [][]float64{five(64, 64, 64, 64, 64), five(64, 64, 64, 64, 64), five(32, 32, 32, 32, 32)}, []int{2}},
		{"bytes wobble", "B/op", [][]float64{five(5123, 5125, 5124, 5125, 5123), five(5126, 5127, 5126, 5127, 5127)}, nil},
		{"too few samples", "allocs/op", [][]float64{{1}, {2}}, nil},
		{"time is noisy", "sec/op", [][]float64{five(1, 1.1, 1.05, 1.02, 1.01), five(2, 2.1, 2.05, 2.02, 2.01)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ps []Point
			for i, vs := range tc.points {
				ps = append(ps, Point{Commit: string(rune('a' + i)), Values: vs})
			}
			h := DetectChanges(tc.unit, ps, Options{})
			if got := changed(h); !slices.Equal(got, tc.want) {
				t.Errorf("marked %v, want %v (%+v)", got, tc.want, h.Commits)
			}
			for _, i := range tc.want {
				if h.Commits[i].Better == 0 {
					t.Errorf("commit %d: no direction", i)
				}
			}
		})
	}
}

// TestHistoryStepsDoNotHideThemselves: four real steps among the eleven
// changes of a short noisy series raise a noise estimate that counts them
// beyond their own size; estimated again without the steps found, the
// noise is the series' own and every step is marked.
func TestHistoryStepsDoNotHideThemselves(t *testing.T) {
	ps := historyFixture(t)["sec/op"][:12]
	threshold := DetectChanges("sec/op", ps, Options{}).Threshold
	step := (1 + threshold) * (1 + threshold)
	steps := ps
	for i, at := range []int{2, 4, 6, 8} {
		k := step
		if i%2 == 1 {
			k = 1 / step
		}
		steps = scaled(steps, at, 12, k)
	}
	h := DetectChanges("sec/op", steps, Options{})
	if got := changed(h); !slices.Equal(got, []int{2, 4, 6, 8}) {
		t.Errorf("steps at 2, 4, 6 and 8 of ×%.2f: marked %v (noise %.3f, threshold %.3f)", step, got, h.Noise, h.Threshold)
	}
}
