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
