package findings

import (
	"strings"
	"testing"
)

// TestAllocPackage diagnoses a program whose allocations are a small
// decimal package's, made at several of its lines and called from several
// of the program's: the finding names the package and its callers.
func TestAllocPackage(t *testing.T) {
	fs := checkRule(t, "alloc-package", "allocpkg", nil)
	for _, f := range fs {
		if !strings.Contains(plain(f.Summary), "testdata/allocpkg/bad/decimal allocates") {
			t.Errorf("the finding does not name the decimal package: %s", describe(f))
		}
	}
}

// TestAllocPackageSparesOthers runs the rule on every other program,
// bad and good, and on the examples' committed runs: none of them
// allocates mostly through a library of its own module or a dependency,
// so the rule must stay quiet, and the examples' findings stay what they
// were.
func TestAllocPackageSparesOthers(t *testing.T) {
	for _, program := range append(programs(), "leftpad-naive", "leftpad-optimized", "txsummary-naive", "txsummary-optimized") {
		if strings.HasPrefix(program, "allocpkg/") {
			continue
		}
		t.Run(program, func(t *testing.T) {
			t.Parallel()
			fs, _ := Diagnose(workload(t, program), nil, Options{})
			for _, f := range ofRule(fs, "alloc-package") {
				t.Errorf("alloc-package fired on %s: %s", program, describe(f))
			}
		})
	}
}
