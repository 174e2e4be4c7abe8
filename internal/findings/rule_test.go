package findings

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
)

func TestRules(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.ID] {
			t.Errorf("duplicate rule id %s", r.ID)
		}
		seen[r.ID] = true
		if r.Title == "" || r.Summary == "" || r.Fix.Summary == "" || r.Fix.Example == "" || len(r.Resources) == 0 || r.check == nil {
			t.Errorf("rule %s is incomplete: %+v", r.ID, r)
		}
		// Thresholds are written down in the explanation.
		if !slices.ContainsFunc(r.Explanation, func(p Part) bool { return p.Kind != Words }) {
			t.Errorf("explanation of %s states no threshold:\n%s", r.ID, plain(r.Explanation))
		}
	}
	for _, id := range []string{"concat-loop", "fmt-hot", "built-per-call", "small-writes", "std-logger-lock", "lock-wait",
		"json-reflect", "gc-pressure", "growth", "iface-escape", "goroutine-growth", "not-bottleneck", "reread", "alloc-hot"} {
		if !seen[id] {
			t.Errorf("no rule %s", id)
		}
	}
}

func TestDiagnoseNoProfiles(t *testing.T) {
	fs, warns := Diagnose(nil, nil, Options{})
	if fs != nil || len(warns) == 0 {
		t.Errorf("nil analysis: %v %v", fs, warns)
	}
}

func TestDiagnoseOnlySelectedRules(t *testing.T) {
	a := workload(t, "concat/bad")
	fs, warns := Diagnose(a, nil, Options{Rules: []string{"gc-pressure", "bogus"}})
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "bogus") {
		t.Errorf("warnings: %v", warns)
	}
	for _, f := range fs {
		if f.Rule != "gc-pressure" {
			t.Errorf("rule %s ran", f.Rule)
		}
	}
}

// TestDiagnoseMismatchedSource gives a checkout holding another program
// under the profiled file's name: the findings keep their numbers, drop
// source text and compiler reasons, and say why.
func TestDiagnoseMismatchedSource(t *testing.T) {
	a := workload(t, "concat/bad")
	checkout := t.TempDir()
	other, err := os.ReadFile(filepath.Join("testdata", "concat", "good", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	other = append([]byte("// shifted\n// by\n// three lines\n"), other...)
	if err := os.MkdirAll(filepath.Join(checkout, "bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "bad", "main.go"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	// Without the source the loop is not seen: the concatenation is
	// concat-hot's, with a note.
	fs, warns := Diagnose(a, escapeIndex(t), Options{SourceDir: checkout, Rules: []string{"concat-loop", "concat-hot"}})
	if len(warns) == 0 || !strings.Contains(warns[0].Error(), "does not match the profiled program") {
		t.Errorf("want a mismatch warning, got %v", warns)
	}
	if len(fs) == 0 {
		t.Fatal("the rule no longer fires: numbers come from the profiles")
	}
	f := fs[0]
	if f.Evidence[0].Source != "" || len(f.Evidence[0].Compiler) != 0 {
		t.Errorf("mismatched source still shown: %s", describe(f))
	}
	if f.Rule != "concat-hot" || !hasNote(f, "does not match the profiled program") || !hasNote(f, "inside a loop was not checked") {
		t.Errorf("want concat-hot with notes about the mismatch and the loop left unchecked: %s", describe(f))
	}
}

// TestDiagnoseWithoutSource moves the profiled files to paths that exist
// nowhere, as for a binary built on another machine: findings still come
// from the profiles, without source text, and say what is missing.
func TestDiagnoseWithoutSource(t *testing.T) {
	a := withoutSource(t, "concat/bad")
	fs, warns := Diagnose(a, nil, Options{Rules: []string{"concat-loop", "concat-hot"}})
	if len(fs) == 0 {
		t.Fatalf("no finding without source; warnings %v", warns)
	}
	if fs[0].Rule != "concat-hot" || fs[0].Evidence[0].Source != "" || !hasNote(fs[0], "--source-dir") || !hasNote(fs[0], "inside a loop was not checked") {
		t.Errorf("finding without source: %s", describe(fs[0]))
	}
}

// withoutSource returns the analysis of a program's run with its files
// moved to paths that exist nowhere.
func withoutSource(t *testing.T, program string) *profiles.Analysis {
	t.Helper()
	built := workload(t, program)
	a := &profiles.Analysis{Run: built.Run, CPU: built.CPU, Profiles: map[string]*profile.Profile{}}
	var ps []*profile.Profile
	for kind, p := range built.Profiles {
		q := p.Copy()
		for _, fn := range q.Function {
			fn.Filename = strings.Replace(fn.Filename, "/internal/findings/", "/nowhere/on/this/machine/", 1)
		}
		a.Profiles[kind] = q
		ps = append(ps, q)
	}
	a.Classifier = profiles.NewClassifier("", ps...)
	return a
}

func hasNote(f Finding, substr string) bool {
	for _, n := range f.Notes {
		if strings.Contains(n, substr) {
			return true
		}
	}
	return false
}
