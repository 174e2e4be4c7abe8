package report

import (
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/profiles"
)

func TestSourceSection(t *testing.T) {
	a := fixture()
	a.Source = []*profiles.SourceView{{
		Kind: "allocs", SampleType: "alloc_objects", Unit: "count", Total: 1000,
		Functions: []profiles.FunctionSource{{
			Function: "main.leftpad", File: "/src/leftpad/leftpad.go", StartLine: 100,
			Self: 400, SelfShare: 0.4, Cum: 400, CumShare: 0.4,
			Lines: []profiles.SourceLine{
				{Line: 100, Text: "func leftpad(s string, n int, c rune) string {"},
				{Line: 109, Text: "\t\ts = string(c) + s", Self: 400, SelfShare: 0.4, Cum: 400, CumShare: 0.4, Gap: true},
			},
		}},
	}}
	text := render(t, Text, a, nil)
	for _, want := range []string{
		"\nSOURCE\n",
		"alloc_objects: main.leftpad at leftpad/leftpad.go:100 — self 400 (40.0%), cum 400 (40.0%)",
		"  line  self  flat  cum  source",
		"     …",
		"   109   400     .  400          s = string(c) + s",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	md := render(t, Markdown, a, nil)
	if !strings.Contains(md, "### Source") || !strings.Contains(md, "s = string(c) + s` |") {
		t.Errorf("markdown source section:\n%s", md)
	}
	if js := render(t, JSON, a, nil); !strings.Contains(js, `"source": [`) || !strings.Contains(js, `"self_share": 0.4`) {
		t.Error("JSON lacks the source listings")
	}
}
