package analysis

import (
	"runtime"
	"slices"
	"testing"

	"github.com/perfscope/perfscope/internal/findings"
	"github.com/perfscope/perfscope/internal/run"
)

// loadCommitted loads testdata/leftpad-naive, a real run of the leftpad
// example in its naive mode.
func loadCommitted(t *testing.T) *run.Run {
	t.Helper()
	r, err := run.Load("testdata/leftpad-naive")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func rules(fs []findings.Finding) []string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.Rule)
	}
	return ids
}

func TestAnalyzeWithoutCompiler(t *testing.T) {
	r := loadCommitted(t)
	// The profiles name the files where the run was made; SourceDir finds
	// them in this checkout wherever it is.
	in := FromRun(r)
	in.Source.Dir = "../.."
	res := Analyze(t.Context(), in, Options{NoCompiler: true, List: 2})
	if len(res.Warnings) != 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	if !res.CompilerSkipped {
		t.Error("CompilerSkipped not set with NoCompiler")
	}
	if res.Analysis.Run.ID != r.ID || res.Analysis.CPU == nil || res.Analysis.Allocs == nil {
		t.Fatalf("analysis incomplete: run %q, cpu %v, allocs %v", res.Analysis.Run.ID, res.Analysis.CPU, res.Analysis.Allocs)
	}
	if len(res.Analysis.Source) == 0 {
		t.Error("List 2 added no source listings")
	}
	for _, want := range []string{"built-per-call", "concat-loop"} {
		if !slices.Contains(rules(res.Findings), want) {
			t.Errorf("findings %v lack %s", rules(res.Findings), want)
		}
	}
	for _, f := range res.Findings {
		if f.Severity <= 0 || f.Severity > 1 {
			t.Errorf("%s: severity %v out of (0, 1]", f.Rule, f.Severity)
		}
	}
}

// TestAnalyzeSameTwice checks that the pipeline is a function of the run
// and the options: every caller gets the same findings.
func TestAnalyzeSameTwice(t *testing.T) {
	r := loadCommitted(t)
	a := Analyze(t.Context(), FromRun(r), Options{NoCompiler: true})
	b := Analyze(t.Context(), FromRun(r), Options{NoCompiler: true})
	if len(a.Findings) == 0 || len(a.Findings) != len(b.Findings) {
		t.Fatalf("%d and %d findings", len(a.Findings), len(b.Findings))
	}
	for i := range a.Findings {
		if a.Findings[i].Rule != b.Findings[i].Rule || a.Findings[i].Severity != b.Findings[i].Severity {
			t.Errorf("finding %d: %s %v, then %s %v", i, a.Findings[i].Rule, a.Findings[i].Severity, b.Findings[i].Rule, b.Findings[i].Severity)
		}
	}
}

func TestAnalyzeMissingProfiles(t *testing.T) {
	r := loadCommitted(t)
	r.Dir = t.TempDir() // run.json's profiles are not there
	res := Analyze(t.Context(), FromRun(r), Options{})
	if len(res.Warnings) == 0 || len(res.Analysis.Warnings) < len(res.Warnings) {
		t.Errorf("warnings %v, in the analysis %v; want the missing profiles in both", res.Warnings, res.Analysis.Warnings)
	}
	if res.CompilerSkipped || len(res.Findings) != 0 {
		t.Errorf("no profiles, yet compiler skipped %v and %d findings", res.CompilerSkipped, len(res.Findings))
	}
}

func TestTargetCores(t *testing.T) {
	for _, tc := range []struct {
		r    run.Run
		want float64
	}{
		{run.Run{Target: "http://10.1.2.3:8080/", TargetCPUs: 16}, 16},
		{run.Run{Target: "http://127.0.0.1:8080/", TargetCPUs: 3}, 3},
		{run.Run{Target: "http://10.1.2.3:8080/"}, 0},
		{run.Run{Target: "http://localhost:8080/"}, float64(runtime.NumCPU())},
	} {
		if got := targetCores(tc.r.Target, tc.r.TargetCPUs); got != tc.want {
			t.Errorf("targetCores(%s, %d CPUs recorded) = %v, want %v", tc.r.Target, tc.r.TargetCPUs, got, tc.want)
		}
	}
}
