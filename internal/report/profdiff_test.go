package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/profdiff"
)

func TestWriteProfileDiffs(t *testing.T) {
	diffs := []*profdiff.Diff{
		{Kind: "cpu", SampleType: "cpu/nanoseconds", BaseTotal: 150e6, HeadTotal: 340e6,
			ByFlat: []profdiff.FunctionDelta{{Function: "x.pad", Flat: 200e6, Cum: 200e6}, {Function: "x.(*T).log", Flat: -10e6, Cum: -10e6}},
			ByCum:  []profdiff.FunctionDelta{{Function: "main.main", Cum: 190e6}}},
		{Kind: "mem", SampleType: "alloc_space/bytes", BaseTotal: 2048, HeadTotal: 2048},
	}
	var text, md bytes.Buffer
	if err := WriteProfileDiffs(&text, Text, diffs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"where it changed (cpu profile, cpu/nanoseconds, head − base): total 150ms → 340ms", "x.pad", "+200ms", "-10ms", "by cum", "main.main", "total 2 KiB → 2 KiB\nno function changed"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := WriteProfileDiffs(&md, Markdown, diffs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**where it changed (cpu profile, cpu/nanoseconds, head − base): total 150ms → 340ms**", "| `x.(*T).log` | -10ms | -10ms |", "<details><summary>by cum</summary>", "| `main.main` | 0s | +190ms |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}
