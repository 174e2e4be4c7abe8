package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/findings"
)

func sampleFindings() []findings.Finding {
	concat, _ := findings.Lookup("concat-loop")
	goroutines, _ := findings.Lookup("goroutine-growth")
	return []findings.Finding{
		{
			Rule: concat.ID, Title: concat.Title, Severity: 0.288, Resource: findings.AllocObjects,
			Summary: findings.Text{
				{Kind: findings.Words, Words: "main.leftpad concatenates strings in a loop at leftpad.go:109: "},
				{Kind: findings.Share, Value: 0.021},
				{Kind: findings.Words, Words: " of CPU and "},
				{Kind: findings.Share, Value: 0.288},
				{Kind: findings.Words, Words: " of allocated objects."},
			},
			Evidence: []findings.Evidence{{
				Function: "main.leftpad", File: "/src/leftpad/leftpad.go", Line: 109, Call: "runtime.concatstring2",
				Source: "s = string(chr) + s",
				Measures: []findings.Measure{
					{Resource: findings.CPU, Value: 20e6, Unit: "nanoseconds", Share: 0.021},
					{Resource: findings.AllocObjects, Value: 436915, Unit: "count", Share: 0.288},
				},
				Compiler: []string{"`string(chr) + s` escapes to heap: stored in `s`"},
			}},
			Fix:   concat.Fix,
			Notes: []string{"Compiler reasons are not shown: they need the program's source (pass --source-dir)."},
		},
		{
			Rule: goroutines.ID, Title: goroutines.Title, Severity: 0.02, Resource: findings.Goroutines,
			Summary: findings.Text{
				{Kind: findings.Words, Words: "Goroutines grew from "},
				{Kind: findings.Count, Value: 10},
				{Kind: findings.Words, Words: " to "},
				{Kind: findings.Count, Value: 40},
				{Kind: findings.Words, Words: "."},
			},
			Evidence: []findings.Evidence{{
				Function: "main.audit.func1", File: "/src/a.go", Line: 28, Call: "runtime.chansend1",
				Detail: findings.Text{
					{Kind: findings.Count, Value: 10},
					{Kind: findings.Words, Words: " → "},
					{Kind: findings.Count, Value: 40},
					{Kind: findings.Words, Words: " goroutines"},
				},
				Stack: []string{"runtime.gopark /go/src/runtime/proc.go:435", "main.audit.func1 /src/a.go:28"},
			}},
			Fix: goroutines.Fix,
		},
	}
}

func TestRenderFindingsText(t *testing.T) {
	var b bytes.Buffer
	if err := RenderFindings(&b, Text, sampleFindings()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	flat := strings.Join(strings.Fields(out), " ") // sentences wrapped at 100 columns
	for _, want := range []string{
		"FINDINGS",
		"1. String concatenation in a loop  [28.8% of allocated objects]  (concat-loop)",
		"main.leftpad concatenates strings in a loop at leftpad.go:109: 2.1% of CPU and 28.8% of allocated objects.",
		"Goroutines grew from 10 to 40.",
		"10 → 40 goroutines",
		"main.leftpad  /src/leftpad/leftpad.go:109  calls runtime.concatstring2",
		"| s = string(chr) + s",
		"2.1% of CPU (20ms), 28.8% of allocated objects (437k)",
		"compiler: `string(chr) + s` escapes to heap",
		"fix: Build the string once with a strings.Builder",
		"var b strings.Builder",
		"note: Compiler reasons are not shown",
		"more: perfscope report --explain concat-loop",
		"2. Goroutines pile up",
		"main.audit.func1 /src/a.go:28",
	} {
		if !strings.Contains(out, want) && !strings.Contains(flat, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "1. ") > strings.Index(out, "2. ") {
		t.Error("findings not in the order given")
	}
	for _, line := range strings.Split(out, "\n") {
		if width(line) > 110 && !strings.Contains(line, "|") {
			t.Errorf("line not wrapped: %q", line)
		}
	}
}

func TestRenderFindingsTextNone(t *testing.T) {
	var b bytes.Buffer
	if err := RenderFindingsText(&b, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "none") {
		t.Errorf("no findings: %q", b.String())
	}
}

func TestRenderFindingsMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := RenderFindings(&b, Markdown, sampleFindings()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"### Findings",
		"### 1. String concatenation in a loop — 28.8% of allocated objects",
		"`concat-loop`",
		"main.leftpad concatenates strings in a loop at leftpad.go:109: 2.1% of CPU and 28.8% of allocated objects.",
		"10 → 40 goroutines",
		"- `main.leftpad` at `/src/leftpad/leftpad.go:109` (calls `runtime.concatstring2`)",
		"```go\n  s = string(chr) + s\n  ```",
		"**Fix:** Build the string once",
		"> Compiler reasons are not shown",
		"<details><summary>stack</summary>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestRenderFindingsJSON(t *testing.T) {
	var b bytes.Buffer
	if err := RenderFindings(&b, JSON, sampleFindings()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Findings) != 2 {
		t.Fatalf("%d findings", len(got.Findings))
	}
	for _, key := range []string{"rule", "title", "severity", "resource", "summary", "evidence", "fix"} {
		if _, ok := got.Findings[0][key]; !ok {
			t.Errorf("finding lacks JSON field %q: %v", key, got.Findings[0])
		}
	}
	// Sentences are written as strings, as in the other formats.
	if s := got.Findings[0]["summary"]; s != "main.leftpad concatenates strings in a loop at leftpad.go:109: 2.1% of CPU and 28.8% of allocated objects." {
		t.Errorf("summary %q", s)
	}
	ev := got.Findings[1]["evidence"].([]any)[0].(map[string]any)
	if ev["detail"] != "10 → 40 goroutines" {
		t.Errorf("detail %q", ev["detail"])
	}
	if _, ok := got.Findings[0]["evidence"].([]any)[0].(map[string]any)["detail"]; ok {
		t.Error("an evidence without detail has one in JSON")
	}
	b.Reset()
	RenderFindings(&b, JSON, nil)
	if !strings.Contains(b.String(), `"findings": []`) {
		t.Errorf("no findings should be an empty array: %s", b.String())
	}
}

// TestFindingText checks how each kind of value in a finding's sentence
// is written.
func TestFindingText(t *testing.T) {
	for _, tc := range []struct {
		part findings.Part
		want string
	}{
		{findings.Part{Kind: findings.Words, Words: "grew"}, "grew"},
		{findings.Part{Kind: findings.Share, Value: 0.2}, "20.0%"},
		{findings.Part{Kind: findings.Count, Value: 412}, "412"},
		{findings.Part{Kind: findings.Count, Value: 3.6}, "4"},
		{findings.Part{Kind: findings.Quantity, Value: 1.5e6, Unit: "nanoseconds"}, "1.5ms"},
		{findings.Part{Kind: findings.Cores, Value: 0.1}, "0.10"},
		{findings.Part{Kind: findings.Seconds, Value: 30}, "30.0s"},
	} {
		if got := FindingText(findings.Text{tc.part}); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.part, got, tc.want)
		}
	}
}

// TestExplain checks every rule's explanation: its thresholds written,
// with its fix.
func TestExplain(t *testing.T) {
	threshold := regexp.MustCompile(`\d+(\.\d+)?%|\d+ (goroutines|CPU samples)|\d+\.\d+ of a core`)
	for _, r := range findings.Rules() {
		text, err := Explain(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !threshold.MatchString(text) || strings.Contains(FindingText(r.Explanation), "{}") {
			t.Errorf("explanation of %s states no threshold or is badly written:\n%s", r.ID, text)
		}
		if !strings.HasPrefix(text, r.ID+": "+r.Title+"\n") || !strings.Contains(text, r.Fix.Summary) {
			t.Errorf("explanation of %s lacks its title or fix:\n%s", r.ID, text)
		}
	}
	if _, err := Explain("no-such-rule"); err == nil || !strings.Contains(err.Error(), "concat-loop") {
		t.Errorf("unknown rule: %v", err)
	}
}
