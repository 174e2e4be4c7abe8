package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/gate"
)

func TestWriteGate(t *testing.T) {
	steady := func(v float64) []float64 {
		xs := make([]float64, 10)
		for i := range xs {
			xs[i] = v * (1 + 0.001*float64(i))
		}
		return xs
	}
	same := func(v float64) []float64 {
		xs := make([]float64, 10)
		for i := range xs {
			xs[i] = v
		}
		return xs
	}
	ms := []gate.Measurement{
		{Package: "example.com/a", Benchmark: "Pad-2", Unit: "sec/op", Base: steady(100e-9), Head: steady(300e-9)},
		{Package: "example.com/a", Benchmark: "Pad-2", Unit: "allocs/op", Base: same(1), Head: same(1)},
		{Package: "example.com/b", Benchmark: "New-2", Unit: "sec/op", Head: same(5e-6)},
	}
	rep := &gate.Report{Base: "main (abc)", Head: "working tree", Rounds: 10, Benchtime: "50ms", Decision: gate.Decide(ms, gate.Config{}),
		Notes: []string{"example.com/b does not exist in the base"}}
	var text, md, js bytes.Buffer
	if err := WriteGate(&text, Text, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pkg: example.com/a", "pkg: example.com/b", "BenchmarkPad-2 sec/op", "REGRESSION", "added", "+200.00%", "note: example.com/b", "FAIL: 1 regression"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := WriteGate(&md, Markdown, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## ❌ perfscope gate — FAIL: 1 regression", "**REGRESSION**", "| **pkg: example.com/a** |", "**+200.00%**", "<details>", "example.com/a BenchmarkPad-2 sec/op"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if err := WriteGate(&js, JSON, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Outcome  string `json:"outcome"`
		ExitCode int    `json:"exit_code"`
		Decision struct {
			Judgements []struct {
				Verdict    string   `json:"verdict"`
				Change     float64  `json:"change"`
				BaseMedian *float64 `json:"base_median"`
			} `json:"judgements"`
		} `json:"decision"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, js.String())
	}
	if doc.ExitCode != 1 || doc.Outcome != "FAIL: 1 regression" || len(doc.Decision.Judgements) != 3 || doc.Decision.Judgements[0].Verdict != "regression" {
		t.Errorf("json: %+v", doc)
	}
}

func TestGateOutcomeUndecided(t *testing.T) {
	d := &gate.Decision{Undecided: 1, UndecidedFails: true, Judgements: []gate.Judgement{{Verdict: gate.TooNoisy, Resolution: 0.12}}}
	got := gateOutcome(d)
	if !strings.HasPrefix(got, "UNDECIDED: 1 measurement too noisy") || !strings.Contains(got, "±12%") {
		t.Errorf("outcome %q", got)
	}
}

// TestWriteGateExplanations renders where a count changed, with the
// numbers a real gate measured on a benchmark whose hot function's loop
// grew by 200 iterations (internal/gate's TestExplainNamesTheFunction).
func TestWriteGateExplanations(t *testing.T) {
	same := func(v float64) []float64 { return []float64{v} }
	ms := []gate.Measurement{{Package: "example.com/scratch", Benchmark: "Mix-2", Unit: "instructions/op", Base: same(280130), Head: same(282934)}}
	e := gate.Explanation{Package: "example.com/scratch", Benchmark: "Mix-2", Unit: "instructions/op",
		Base: 280130.15, Head: 282934.25, Delta: 2804.1, Omitted: 235, Rest: 4.1 + 8.76,
		Functions: []gate.Change{
			{Function: "example.com/scratch.hot", Base: 140007, Head: 142807, Delta: 2800, Share: 2800 / 2804.1},
			{Function: "runtime.pcvalue", Base: 0, Head: -8.76, Delta: -8.76, Share: -8.76 / 2804.1},
		},
		Lines: []gate.Change{{Function: "example.com/scratch.hot", File: "mix_test.go", Line: 15, Source: "s += i % 7", Base: 80000, Head: 81600, Delta: 1600, Share: 1600 / 2804.1}},
	}
	rep := &gate.Report{Base: "main (abc)", Head: "working tree", Measure: gate.MeasureInstructions, Rounds: 1, Benchtime: "20x",
		Decision: gate.Decide(ms, gate.Config{Measure: gate.MeasureInstructions}), Explanations: []gate.Explanation{e}}
	var text, md, js bytes.Buffer
	if err := WriteGate(&text, Text, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"WHERE IT CHANGED", "example.com/scratch BenchmarkMix-2 instructions/op: 280,130 → 282,934, +2,804 per operation",
		"example.com/scratch.hot", "140,007", "142,807", "+2,800", "99.9%", "235 more functions changed: +12.9 together",
		"mix_test.go:15", "s += i % 7", "+1,600", "57.1%"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := WriteGate(&md, Markdown, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Where it changed", "<details><summary>example.com/scratch BenchmarkMix-2 instructions/op: 280,130 → 282,934, +2,804 per operation</summary>",
		"`example.com/scratch.hot`", "`s += i % 7`"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if err := WriteGate(&js, JSON, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Explanations []struct {
			Benchmark string  `json:"benchmark"`
			Unit      string  `json:"unit"`
			Delta     float64 `json:"delta"`
			Omitted   int     `json:"omitted"`
			Functions []struct {
				Function string  `json:"function"`
				Delta    float64 `json:"delta"`
				Share    float64 `json:"share"`
			} `json:"functions"`
			Lines []struct {
				File   string `json:"file"`
				Line   int    `json:"line"`
				Source string `json:"source"`
			} `json:"lines"`
		} `json:"explanations"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, js.String())
	}
	if len(doc.Explanations) != 1 || doc.Explanations[0].Functions[0].Function != "example.com/scratch.hot" || doc.Explanations[0].Functions[0].Delta != 2800 ||
		doc.Explanations[0].Omitted != 235 || doc.Explanations[0].Lines[0].Line != 15 || doc.Explanations[0].Lines[0].Source != "s += i % 7" {
		t.Errorf("json: %+v", doc)
	}
}
