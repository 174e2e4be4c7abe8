package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/analysis"
)

func comparisonFixture() *analysis.SideBySide {
	f := func(v float64) *float64 { return &v }
	return &analysis.SideBySide{
		Base: analysis.Side{Name: "naive", RunID: "r1", Target: "http://127.0.0.1:8080/"},
		Head: analysis.Side{Name: "optimized", RunID: "r2", Target: "http://127.0.0.1:8081/"},
		Metrics: []analysis.Metric{
			{Name: "throughput_rps", Unit: "req/s", Base: f(22800), Head: f(32600), Ratio: f(32600.0 / 22800), Better: "higher", Verdict: "better"},
			{Name: "p99_ms", Unit: "ms", Base: f(4), Head: f(1.5), Ratio: f(0.375), Better: "lower", Verdict: "better"},
			{Name: "alloc_objects_per_request", Unit: "objects", Base: f(12), Head: f(3), Ratio: f(0.25), Better: "lower", Verdict: "better"},
			{Name: "alloc_bytes_per_request", Unit: "bytes", Base: f(2048), Head: f(2048), Ratio: f(1), Better: "lower", Verdict: "same"},
			{Name: "cpu_seconds_per_request", Unit: "seconds", Base: f(40e-6), Head: nil, Better: "lower"},
			{Name: "gc_fraction", Unit: "fraction", Base: f(0.2), Head: f(0.05), Ratio: f(0.25), Better: "lower", Verdict: "better"},
		},
	}
}

func TestComparisonText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSideBySide(&buf, Text, comparisonFixture()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"perfscope comparison: naive vs optimized",
		"naive: run r1",
		"22,800 req/s", "32,600 req/s", "+43.0%",
		"p99 latency", "4ms", "1.5ms", "0.38×",
		"allocations per request", "12", "0.25×",
		"bytes allocated per request", "2 KiB", "0%", "same",
		"CPU per request", "40µs", " -",
		"GC share of CPU", "20.0%", "5.0%", "-15.0 pts",
		"not a significance test",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
}

func TestComparisonMarkdownAndJSON(t *testing.T) {
	var md bytes.Buffer
	if err := WriteSideBySide(&md, Markdown, comparisonFixture()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| metric | naive | optimized | change |  |\n|---|---:|---:|---:|---|\n") ||
		!strings.Contains(md.String(), "| throughput | 22,800 req/s | 32,600 req/s | +43.0% | better |") {
		t.Errorf("markdown comparison:\n%s", md.String())
	}
	var js bytes.Buffer
	if err := WriteSideBySide(&js, JSON, comparisonFixture()); err != nil {
		t.Fatal(err)
	}
	var back analysis.SideBySide
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Metrics) != 6 || back.Metrics[4].Head != nil || back.Base.Name != "naive" {
		t.Errorf("JSON comparison: %+v", back)
	}
}
