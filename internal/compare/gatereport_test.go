package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestGateReport(t *testing.T) {
	steady := func(v float64) []float64 {
		xs := make([]float64, 10)
		for i := range xs {
			xs[i] = v * (1 + 0.001*float64(i))
		}
		return xs
	}
	ms := []Measurement{
		{Package: "example.com/a", Benchmark: "Pad-2", Unit: "sec/op", Base: steady(100e-9), Head: steady(300e-9)},
		{Package: "example.com/a", Benchmark: "Pad-2", Unit: "allocs/op", Base: constantSample(10, 1), Head: constantSample(10, 1)},
		{Package: "example.com/b", Benchmark: "New-2", Unit: "sec/op", Head: constantSample(10, 5e-6)},
	}
	rep := &GateReport{Base: "main (abc)", Head: "working tree", Rounds: 10, Benchtime: "50ms", Decision: Decide(ms, GateConfig{})}
	var text, md, js bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pkg: example.com/a", "pkg: example.com/b", "BenchmarkPad-2 sec/op", "REGRESSION", "ADDED", "FAIL: 1 regression"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "**regression**") || !strings.Contains(md.String(), "<details>") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ExitCode int `json:"exit_code"`
		Decision struct {
			Judgements []struct {
				Verdict string  `json:"verdict"`
				Change  float64 `json:"change"`
			} `json:"judgements"`
		} `json:"decision"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, js.String())
	}
	if doc.ExitCode != 1 || len(doc.Decision.Judgements) != 3 || doc.Decision.Judgements[0].Verdict != "regression" {
		t.Errorf("json: %+v", doc)
	}
}
