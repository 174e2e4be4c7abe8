package findings

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/profiles"
)

// TestCompilerIndex builds the command of a committed run from this
// checkout, and builds it once: a second index of the same source is read
// from perfscope's cache.
func TestCompilerIndex(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(escape.CacheEnv, cache)
	a := workload(t, "concat/bad")
	main, err := filepath.Abs(filepath.Join("testdata", "concat", "bad", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]escape.Diagnostic
	for range 2 {
		ix, warns := CompilerIndex(t.Context(), a, filepath.Join("..", ".."))
		if len(warns) > 0 {
			t.Fatalf("warnings: %v", warns)
		}
		if len(ix.At(main, 22)) == 0 {
			t.Errorf("no diagnostics at the concatenation, main.go:22")
		}
		got = append(got, ix.All())
		if entries, _ := filepath.Glob(filepath.Join(cache, "escape", "*.gob")); len(entries) != 1 {
			t.Errorf("%d cache entries, want 1", len(entries))
		}
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Error("the second index differs from the first")
	}
}

// TestCompilerIndexPackages checks which package a profiled function's file
// stands for: a function of package main only in a command, a function
// named by the module's path in its package whatever that is.
func TestCompilerIndexPackages(t *testing.T) {
	t.Setenv(escape.CacheEnv, t.TempDir())
	// A temporary directory in a go.work's tree would be in a module.
	t.Setenv("GOWORK", "off")
	harness := "/build/ci/perfscope/internal/findings/testdata/harness/harness.go"
	for _, tc := range []struct {
		name, function, file, sourceDir string
		want                            string // a warning, or "" to build harness.go
	}{
		{"module's package", "github.com/perfscope/perfscope/internal/findings/testdata/harness.Loop", harness, "../..", ""},
		{"main in a library's file", "main.main", harness, "../..",
			"compiler reasons unavailable: no command of the module at "},
		{"outside a module", "main.main", harness, t.TempDir(), "is not inside a Go module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &profiles.Analysis{Profiles: map[string]*profile.Profile{
				"cpu": {Function: []*profile.Function{{ID: 1, Name: tc.function, Filename: tc.file}}},
			}}
			ix, warns := CompilerIndex(t.Context(), a, tc.sourceDir)
			if tc.want != "" {
				if len(warns) != 1 || !strings.Contains(warns[0].Error(), tc.want) {
					t.Errorf("warnings = %v, want one containing %q", warns, tc.want)
				}
				return
			}
			if len(warns) > 0 {
				t.Fatalf("warnings: %v", warns)
			}
			local, _ := filepath.Abs(filepath.Join("testdata", "harness", "harness.go"))
			if !ix.Compiled(local) {
				t.Errorf("%s not built", local)
			}
		})
	}
}
