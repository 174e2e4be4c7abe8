package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/gitstate"
)

func bisectResult() *gate.BisectResult {
	commit := func(hash, subject string) gitstate.PathCommit {
		return gitstate.PathCommit{Hash: strings.Repeat(hash, 40), Subject: subject}
	}
	step := func(c gitstate.PathCommit, role, verdict string, v, change float64) gate.BisectStep {
		s := gate.BisectStep{PathCommit: c, Role: role, Verdict: verdict}
		if verdict != gate.BisectSkipped {
			s.Values = []gate.BisectValue{{Package: "example.com/mix", Benchmark: "Mix-2", Value: v, Change: change}}
		} else {
			s.Reason = "does not build: ./version.go:3:17: syntax error"
		}
		return s
	}
	good, bad := commit("a", "first"), commit("f", "last")
	steps := []gate.BisectStep{
		step(good, "good", gate.BisectGood, 4000, 0),
		step(bad, "bad", gate.BisectBad, 4080, 0.02),
		step(commit("c", "broken"), "probe", gate.BisectSkipped, 0, 0),
		step(commit("d", "mix 2% more rounds"), "probe", gate.BisectBad, 4080, 0.02),
		step(commit("b", "before it"), "probe", gate.BisectGood, 4000, 0),
	}
	return &gate.BisectResult{
		Good: gate.BisectEnd{Ref: "HEAD~5", PathCommit: good}, Bad: gate.BisectEnd{Ref: "main", PathCommit: bad},
		Unit: "instructions/op", Threshold: 0.01, Bench: "Mix", PathCommits: 5,
		Benchmarks: []gate.BisectBenchmark{{Package: "example.com/mix", Benchmark: "Mix-2", Good: 4000, Bad: 4080, Change: 0.02, Moved: true},
			{Package: "example.com/mix", Benchmark: "New-2", Good: 0, Bad: 3, Change: math.Inf(1)}},
		Moved: true, FirstBad: &steps[3], LastGood: &steps[4], Steps: steps, Skipped: steps[2:3],
		Builds: 5, Counted: 4,
		Explanations: []gate.Explanation{{Package: "example.com/mix", Benchmark: "Mix-2", Unit: "instructions/op", Base: 4000, Head: 4080, Delta: 80,
			Functions: []gate.Change{{Function: "example.com/mix.Mix", Base: 3990, Head: 4070, Delta: 80, Share: 1}}}},
	}
}

// TestWriteBisect renders a bisection: the answer with both values and
// the change, the skipped commit with its reason, and JSON that carries a
// change from 0 as null.
func TestWriteBisect(t *testing.T) {
	r := bisectResult()
	var text strings.Builder
	if err := WriteBisect(&text, Text, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"first bad commit dddddddddddd mix 2% more rounds",
		"4,000", "4,080", "+2.00%",
		"cccccccccccc broken: does not build: ./version.go:3:17: syntax error",
		"5 built, 4 measured, 1 skipped",
		"beyond 1.0% from good HEAD~5",
		"example.com/mix.Mix",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js strings.Builder
	if err := WriteBisect(&js, JSON, r); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Outcome    string
		ExitCode   int `json:"exit_code"`
		Benchmarks []struct{ Change *float64 }
		FirstBad   struct{ Commit, Subject string } `json:"first_bad"`
		Skipped    []struct{ Commit, Reason string }
		Good       struct{ Ref, Commit string }
	}
	if err := json.Unmarshal([]byte(js.String()), &v); err != nil {
		t.Fatalf("%v\n%s", err, js.String())
	}
	if v.ExitCode != 0 || v.FirstBad.Subject != "mix 2% more rounds" || len(v.Skipped) != 1 || v.Good.Ref != "HEAD~5" || v.Good.Commit != r.Good.Hash {
		t.Errorf("JSON: %+v", v)
	}
	if len(v.Benchmarks) != 2 || v.Benchmarks[0].Change == nil || v.Benchmarks[1].Change != nil {
		t.Errorf("changes %+v: want 0.02 and null", v.Benchmarks)
	}

	// Skipped commits before the first bad one leave the answer open.
	r.Candidates = []gitstate.PathCommit{r.Steps[2].PathCommit, r.Steps[3].PathCommit}
	text.Reset()
	if err := WriteBisect(&text, Text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "the change began at one of 2 commits") {
		t.Errorf("text does not say the answer is open:\n%s", text.String())
	}
	// Nothing moved: nothing to find, exit 1.
	r.Moved, r.FirstBad, r.LastGood, r.Candidates = false, nil, nil, nil
	text.Reset()
	if err := WriteBisect(&text, Text, r); err != nil || !strings.Contains(text.String(), "nothing to find") || r.ExitCode() != 1 {
		t.Errorf("nothing moved: exit %d, %v\n%s", r.ExitCode(), err, text.String())
	}
}
