package profiles

import (
	"os"
	"path/filepath"
	"testing"
)

// TestConfinedPath: a profile's file names reach only files inside the
// source directory, whatever they say.
func TestConfinedPath(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "src")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "svc", "h"), 0o755))
	must(os.WriteFile(filepath.Join(root, "svc", "h", "h.go"), []byte("package h\n"), 0o644))
	must(os.MkdirAll(filepath.Join(top, "secret"), 0o755))
	secret := filepath.Join(top, "secret", "secret.go")
	must(os.WriteFile(secret, []byte("package secret\n"), 0o644))
	linked := true
	if err := os.Symlink(filepath.Join(top, "secret"), filepath.Join(root, "link")); err != nil {
		linked = false // no symbolic links here (Windows without the privilege)
	}
	for _, tc := range []struct {
		build string
		want  string // relative to root; "" for none
	}{
		{"/build/ci/svc/h/h.go", "svc/h/h.go"},
		{"svc/h/h.go", "svc/h/h.go"},
		{secret, ""},
		{"../secret/secret.go", ""},
		{"svc/../../secret/secret.go", ""},
		{"/src/svc/../../secret/secret.go", ""},
		{"link/secret.go", ""},
		{"/etc/passwd", ""},
	} {
		got, ok := ConfinedPath(root, tc.build)
		if tc.want == "" {
			if ok {
				t.Errorf("ConfinedPath(%q) = %s, want none", tc.build, got)
			}
			continue
		}
		realRoot, _ := filepath.EvalSymlinks(root)
		if want := filepath.Join(realRoot, filepath.FromSlash(tc.want)); !ok || got != want {
			t.Errorf("ConfinedPath(%q) = %q, %v; want %q", tc.build, got, ok, want)
		}
	}
	if linked {
		if got, ok := MapPath(root, "link/secret.go"); !ok || got == "" {
			t.Errorf("MapPath follows links (%q, %v): the test's link is not in place", got, ok)
		}
	}
	if _, ok := ConfinedPath("", secret); ok {
		t.Error("ConfinedPath without a root found a file")
	}
	// Unconfined, a local build's path is read where it is; confined, never.
	if _, ok := LocateSource(secret, SourceOptions{SourceDir: root}); !ok {
		t.Error("LocateSource unconfined did not read a file at its build path")
	}
	if p, ok := LocateSource(secret, SourceOptions{SourceDir: root, Confined: true}); ok {
		t.Errorf("LocateSource confined read %s", p)
	}
}
