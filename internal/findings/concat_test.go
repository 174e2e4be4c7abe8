package findings

import (
	"strings"
	"testing"
)

func TestConcatLoop(t *testing.T) {
	ix := escapeIndex(t)
	fs := checkRule(t, "concat-loop", "concat", ix)
	for _, f := range fs {
		if !strings.Contains(plain(f.Summary), "in a loop") {
			t.Errorf("summary does not say the concatenation is in a loop: %s", plain(f.Summary))
		}
		if len(f.Evidence) == 0 || !hasReason(f.Evidence[0], "escapes to heap") {
			t.Errorf("no compiler reason: %s", describe(f))
		}
	}
	checkQuiet(t, "concat-loop", "concathot/bad", ix)
}

// TestConcatHot checks that a concatenation outside any loop is told
// apart from one in a loop: its own rule, title, summary and fix, none of
// which speaks of a loop.
func TestConcatHot(t *testing.T) {
	ix := escapeIndex(t)
	fs := checkRule(t, "concat-hot", "concathot", ix)
	for _, f := range fs {
		for _, text := range []string{f.Title, plain(f.Summary), f.Fix.Summary, f.Fix.Example} {
			if strings.Contains(text, "loop") {
				t.Errorf("the finding on a concatenation outside a loop speaks of a loop: %q", text)
			}
		}
		for _, line := range strings.Split(f.Fix.Example, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "for ") {
				t.Errorf("the fix of a concatenation outside a loop shows a loop: %s", f.Fix.Example)
			}
		}
		if !strings.Contains(plain(f.Summary), "on every call") || !strings.Contains(f.Fix.Summary, "buffer") {
			t.Errorf("summary or fix does not fit a concatenation per call: %s\nfix: %s", plain(f.Summary), f.Fix.Summary)
		}
		if len(f.Notes) > 0 {
			t.Errorf("the source was found, yet the finding has notes: %v", f.Notes)
		}
	}
	checkQuiet(t, "concat-hot", "concat/bad", ix)
}

func hasReason(ev Evidence, substr string) bool {
	for _, c := range ev.Compiler {
		if strings.Contains(c, substr) {
			return true
		}
	}
	return false
}
