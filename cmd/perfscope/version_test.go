package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionRevision checks what 'perfscope version' says of the commit a
// binary was built from: the revision the build recorded, nothing beside a
// released version, and why there is none otherwise — which a binary built
// with -buildvcs=false, as GOFLAGS often asks, shows for real.
func TestVersionRevision(t *testing.T) {
	vcs := map[string]string{"vcs": "git", "vcs.revision": "0123456789abcdef0123456789abcdef01234567", "vcs.time": "2026-03-04T05:06:07Z", "vcs.modified": "true"}
	for _, tc := range []struct {
		version  string
		settings map[string]string
		want     string
	}{
		{"(devel)", vcs, "0123456789abcdef0123456789abcdef01234567 (modified), committed 2026-03-04T05:06:07Z"},
		{"v1.2.3", map[string]string{}, ""},
		{"(devel)", map[string]string{"-buildmode": "exe"}, "unknown: the build recorded none (built with -buildvcs=false"},
		{"", nil, "unknown: the build recorded none (built with -buildvcs=false"},
	} {
		if got := revision(tc.version, tc.settings); !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("revision(%q, %v) = %q, want %q", tc.version, tc.settings, got, tc.want)
		}
	}

	if testing.Short() {
		t.Skip("builds perfscope")
	}
	bin := filepath.Join(t.TempDir(), "perfscope")
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=false: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("perfscope version: %v", err)
	}
	if want := "\nrevision  unknown: the build recorded none (built with -buildvcs=false, which GOFLAGS often sets: see 'go env GOFLAGS';"; !strings.Contains(string(out), want) {
		t.Errorf("perfscope version of a build with -buildvcs=false:\n%s\nwant a line starting %q", out, want[1:])
	}
}
