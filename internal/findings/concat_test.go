package findings

import (
	"strings"
	"testing"
)

func TestConcatLoop(t *testing.T) {
	fs := checkRule(t, "concat-loop", "concat", escapeIndex(t))
	for _, f := range fs {
		if !strings.Contains(f.Summary, "in a loop") {
			t.Errorf("summary does not say the concatenation is in a loop: %s", f.Summary)
		}
		if len(f.Evidence) == 0 || !hasReason(f.Evidence[0], "escapes to heap") {
			t.Errorf("no compiler reason: %s", describe(f))
		}
	}
}

func hasReason(ev Evidence, substr string) bool {
	for _, c := range ev.Compiler {
		if strings.Contains(c, substr) {
			return true
		}
	}
	return false
}
