package profseries

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergedProfileTools: a merged CPU profile is a file go tool pprof
// opens and go build -pgo accepts.
func TestMergedProfileTools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped in -short mode")
	}
	c, d := NewCodec(), NewDictionary()
	var ws []Window
	for _, p := range realProfiles(t, CPU) {
		w, _ := window(t, c, d, p)
		ws = append(ws, w)
	}
	p, err := MergedProfile(ws, d)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pgo := filepath.Join(dir, "merged.pprof")
	f, err := os.Create(pgo)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	out, err := exec.Command("go", "tool", "pprof", "-top", pgo).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "flat%") {
		t.Fatalf("go tool pprof -top: %v\n%s", err, out)
	}
	prog := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"
	for name, text := range map[string]string{"go.mod": "module pgotest\n\ngo 1.26\n", "main.go": prog} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", "-pgo="+pgo, "-o", filepath.Join(dir, "pgotest"), ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -pgo refused the merged profile: %v\n%s", err, out)
	}
}
