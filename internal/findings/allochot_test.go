package findings

import (
	"strings"
	"testing"
)

func TestAllocHot(t *testing.T) {
	fs := checkRule(t, "alloc-hot", "allochot", nil)
	for _, f := range fs {
		if !strings.Contains(f.Summary, "math/big") {
			t.Errorf("the finding does not name math/big: %s", describe(f))
		}
	}
}

// TestAllocHotSparesFixedPrograms runs the rule on every rule's fixed
// program: a program whose known problem is fixed has no hot allocation
// site left unexplained.
func TestAllocHotSparesFixedPrograms(t *testing.T) {
	for _, program := range programs() {
		if !strings.HasSuffix(program, "/good") {
			continue
		}
		t.Run(program, func(t *testing.T) {
			t.Parallel()
			for _, f := range ofRule(diagnose(t, program, nil), "alloc-hot") {
				t.Errorf("alloc-hot fired on the fixed program %s: %s", program, describe(f))
			}
		})
	}
}
