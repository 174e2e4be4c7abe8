package findings

import (
	"strings"
	"testing"
)

func TestAllocHot(t *testing.T) {
	fs := checkRule(t, "alloc-hot", "allochot", nil)
	for _, f := range fs {
		if !strings.Contains(plain(f.Summary), "math/big") {
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

// TestAllocHotLeavesExplainedLines diagnoses the fmt-hot rule's bad
// program, whose hottest allocating line is a fmt.Sprintf that fmt-hot
// explains: alloc-hot stays away from it, also when it is the only rule
// asked for.
func TestAllocHotLeavesExplainedLines(t *testing.T) {
	a := workload(t, "fmt/bad")
	all, _ := Diagnose(a, nil, Options{})
	explained := ofRule(all, "fmt-hot")
	if len(explained) == 0 {
		t.Fatal("fmt-hot does not fire on fmt/bad: the test checks nothing")
	}
	only, _ := Diagnose(a, nil, Options{Rules: []string{"alloc-hot"}})
	if len(only) != len(ofRule(only, "alloc-hot")) {
		t.Errorf("rules that were not asked for are reported: %v", only)
	}
	for _, fs := range [][]Finding{ofRule(all, "alloc-hot"), only} {
		for _, f := range fs {
			for _, ev := range f.Evidence {
				if named(explained, ev.File, ev.Line) {
					t.Errorf("alloc-hot names a line fmt-hot explains: %s", describe(f))
				}
			}
		}
	}
}
