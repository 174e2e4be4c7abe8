package findings

import "testing"

func TestIfaceEscape(t *testing.T) {
	fs := checkRule(t, "iface-escape", "ifaceescape", escapeIndex(t))
	if len(fs) > 0 && !hasReason(fs[0].Evidence[0], "interface argument") {
		t.Errorf("no compiler reason about interface arguments: %s", describe(fs[0]))
	}
}

// TestIfaceEscapeWithoutIndex checks that the rule still fires from the
// profiles alone, and says what is missing.
func TestIfaceEscapeWithoutIndex(t *testing.T) {
	fs := checkRule(t, "iface-escape", "ifaceescape", nil)
	for _, f := range fs {
		if len(f.Notes) == 0 {
			t.Errorf("no note about the missing compiler reasons: %s", describe(f))
		}
	}
}
