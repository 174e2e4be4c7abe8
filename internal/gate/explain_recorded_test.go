package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/store"
)

// profileFiles answers a store's reads of instruction profiles with the
// real profiles the dashboard's fixture recorded: run 1 is the base's, 2
// the head's, of every benchmark but "Bare", which no run kept.
type profileFiles struct{ data map[int64][]byte }

func (p profileFiles) InstructionProfiles(_ context.Context, c store.Commit, f store.Filter) ([]store.InstructionProfile, error) {
	run := int64(1)
	if c.Hash == "head" {
		run = 2
	}
	var out []store.InstructionProfile
	for i := range 22 {
		out = append(out, store.InstructionProfile{RunID: run, Package: "example.com/scratch", Name: fmt.Sprintf("Mix%02d", i)})
	}
	return out, nil
}

func (p profileFiles) InstructionProfileData(_ context.Context, run int64, pkg, name string) ([]byte, error) {
	return p.data[run], nil
}

// TestExplainRecorded explains recorded commits' changes beyond the
// threshold, the largest first within the bound, and says why the others
// and a benchmark without profiles are not.
func TestExplainRecorded(t *testing.T) {
	src := profileFiles{data: make(map[int64][]byte)}
	for run, name := range map[int64]string{1: "base", 2: "head"} {
		data, err := os.ReadFile(filepath.Join("..", "server", "testdata", "instructions", name+".instructions.pb.gz"))
		if err != nil {
			t.Fatal(err)
		}
		src.data[run] = data
	}
	base, head := &store.CommitSamples{Commit: store.Commit{Hash: "base"}}, &store.CommitSamples{Commit: store.Commit{Hash: "head"}}
	// Mix00 moved 0.5% (within the threshold), Mix01 to Mix21 by
	// 2%, 3%, ... 22%, and Bare by 100%: two more than are explained
	// at once.
	for i := range 22 {
		k := store.SeriesKey{Package: "example.com/scratch", Name: fmt.Sprintf("Mix%02d", i), Unit: bench.UnitInstructions}
		change := 1 + 0.005
		if i > 0 {
			change = 1 + float64(i+1)/100
		}
		base.Samples = append(base.Samples, store.SeriesSamples{SeriesKey: k, Values: []float64{1000}})
		head.Samples = append(head.Samples, store.SeriesSamples{SeriesKey: k, Values: []float64{1000 * change}})
	}
	bare := store.SeriesKey{Package: "example.com/scratch", Name: "Bare", Unit: bench.UnitInstructions}
	base.Samples = append(base.Samples, store.SeriesSamples{SeriesKey: bare, Values: []float64{10}})
	head.Samples = append(head.Samples, store.SeriesSamples{SeriesKey: bare, Values: []float64{20}})

	changes, err := ExplainRecorded(context.Background(), src, base, head, store.Filter{}, 0.01, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 22 {
		t.Fatalf("%d changes, want 22 (Mix01 to Mix21 and Bare)", len(changes))
	}
	for _, c := range changes {
		switch {
		case c.Benchmark == "Bare":
			if c.Explanation != nil || !strings.Contains(c.Unexplained, "neither commit's count of it kept a per-function profile") {
				t.Errorf("Bare: %+v", c)
			}
		case c.Benchmark == "Mix01" || c.Benchmark == "Mix02":
			// 2% and 3%, the smallest changes (Bare's +100% is
			// among the 20 largest): beyond the bound.
			if c.Explanation != nil || !strings.Contains(c.Unexplained, "only the largest changes") {
				t.Errorf("%s: %+v, want it left out", c.Benchmark, c)
			}
		default:
			if c.Explanation == nil || c.BaseRun != 1 || c.HeadRun != 2 || c.Explanation.Functions[0].Function != "example.com/scratch.hot" || c.Explanation.Functions[0].Delta != 14000 {
				t.Errorf("%s: %+v (%+v), want hot first with +14000", c.Benchmark, c, c.Explanation)
			}
		}
	}
}
