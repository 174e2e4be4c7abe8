package report

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/run"
)

// TestDemoSummary renders the demo's outcome from the committed runs of
// both leftpad modes: by default each finding in one line with the command
// for the whole report, then the side-by-side table; --full the whole
// reports.
func TestDemoSummary(t *testing.T) {
	var modes []DemoMode
	for _, mode := range []string{"naive", "optimized"} {
		dir := filepath.Join("..", "findings", "testdata", "runs", "leftpad-"+mode)
		r, err := run.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		res := analysis.Analyze(context.Background(), analysis.FromRun(r), analysis.Options{NoCompiler: true})
		modes = append(modes, DemoMode{Example: "leftpad", Mode: mode, RunDir: dir, Result: res})
	}
	if len(modes[0].Result.Findings) == 0 {
		t.Fatal("the naive run has no findings: the test shows nothing")
	}
	cmp := analysis.Beside("naive", modes[0].Result.Analysis, "optimized", modes[1].Result.Analysis)

	var sum, full bytes.Buffer
	if err := WriteDemo(&sum, Text, modes, cmp, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteDemo(&full, Text, modes, cmp, true); err != nil {
		t.Fatal(err)
	}
	out := sum.String()
	for _, m := range modes {
		if !strings.Contains(out, "perfscope report "+m.RunDir+"\n") {
			t.Errorf("summary does not say how to see the %s run's whole report:\n%s", m.Mode, out)
		}
		for i, f := range m.Result.Findings {
			head := strings.Join([]string{strconv.Itoa(i+1) + ". " + f.Title, "[" + severityText(f) + "]", "(" + f.Rule + ")"}, "  ")
			if !strings.Contains(out, head) {
				t.Errorf("summary lacks the %s run's finding %q:\n%s", m.Mode, head, out)
			}
			if s := FindingText(f.Summary); !strings.Contains(full.String(), s[:min(len(s), 40)]) {
				t.Errorf("--full lacks the %s run's finding %s", m.Mode, f.Rule)
			}
		}
	}
	for _, want := range []string{"LEFTPAD, NAIVE MODE", "LEFTPAD, OPTIMIZED MODE", "SIDE BY SIDE", "throughput"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "fix:") || strings.Contains(out, "CPU BY ROUTE") {
		t.Errorf("summary holds whole reports:\n%s", out)
	}
	for _, want := range []string{"=== leftpad --mode naive ===", "=== leftpad --mode optimized ===", "FINDINGS", "fix:", "SIDE BY SIDE"} {
		if !strings.Contains(full.String(), want) {
			t.Errorf("--full lacks %q", want)
		}
	}
	if s, f := strings.Count(out, "\n"), strings.Count(full.String(), "\n"); s*5 > f {
		t.Errorf("summary has %d lines, the whole reports %d: no shorter", s, f)
	}

	var md bytes.Buffer
	if err := WriteDemo(&md, Markdown, modes, cmp, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "### leftpad, naive mode") || !strings.Contains(md.String(), "| metric |") {
		t.Errorf("markdown summary:\n%s", md.String())
	}
}
