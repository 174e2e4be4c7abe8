package profiles

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMapPath(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "internal", "h", "handler.go")
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local, []byte("package h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		"/build/ci/svc/internal/h/handler.go",
		"example.com/svc/internal/h/handler.go",
		`D:\a\svc\internal\h\handler.go`,
		local,
	} {
		if got, ok := MapPath(dir, in); !ok || got != local {
			t.Errorf("MapPath(%q) = %q, %v; want %q", in, got, ok, local)
		}
	}
	if got, ok := MapPath(dir, "/build/ci/svc/internal/h/missing.go"); ok {
		t.Errorf("MapPath of a missing file = %q, want none", got)
	}
	// A directory of the same name is not a source file.
	if got, ok := MapPath(dir, "/x/internal/h"); ok {
		t.Errorf("MapPath of a directory = %q, want none", got)
	}
}
