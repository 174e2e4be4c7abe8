package escape

import (
	"os"
	"path/filepath"
	"strings"
)

// MapPath finds the file in the checkout at sourceDir that a build path
// (as a profile records it, from the machine that built the binary, or
// module-relative under -trimpath) refers to. It tries the build path's
// trailing elements under sourceDir, longest first, so
// "/build/ci/svc/internal/h/h.go" finds "<sourceDir>/internal/h/h.go".
// It returns false when no suffix exists there.
func MapPath(sourceDir, buildPath string) (string, bool) {
	elems := strings.FieldsFunc(buildPath, isSep)
	for i := range elems {
		p := filepath.Join(sourceDir, filepath.Join(elems[i:]...))
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}
