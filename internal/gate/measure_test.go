package gate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/bench"
)

// scratchRepo is a git repository holding one module whose benchmark
// runs a loop of a given length.
type scratchRepo struct {
	t   *testing.T
	dir string
}

func (r scratchRepo) commit(iters int, comment, msg string) {
	r.t.Helper()
	src := `package scratch

import "testing"

var total int

// COMMENT
func BenchmarkLoop(b *testing.B) {
	for b.Loop() {
		s := 0
		for i := range ITERS {
			s += i % 7
		}
		total += s
	}
}

func BenchmarkSteady(b *testing.B) {
	for b.Loop() {
		s := 0
		for i := range 5000 {
			s += i % 5
		}
		total += s
	}
}
`
	src = strings.NewReplacer("ITERS", strconv.Itoa(iters), "COMMENT", comment).Replace(src)
	for name, content := range map[string]string{"go.mod": "module example.com/scratch\n\ngo 1.26\n", "loop_test.go": src} {
		if err := os.WriteFile(filepath.Join(r.dir, name), []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", msg}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = r.dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			r.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// TestMeasureInstructions runs the gate on instruction counts end to end:
// a comment-only commit passes and a commit making one benchmark's loop
// 30% longer fails naming that benchmark. Counts this small (a Target of
// 20 million instructions) move by up to about 1.5% on a machine that is
// very busy — the runtime's background thread wakes by the wall clock —
// so the threshold here is 10%, far from both the noise and the change.
func TestMeasureInstructions(t *testing.T) {
	valgrind, err := bench.FindValgrind()
	if err != nil {
		if os.Getenv("PERFSCOPE_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	r := scratchRepo{t: t, dir: t.TempDir()}
	if out, err := exec.Command("git", "init", "-q", "-b", "main", r.dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	r.commit(10000, "BenchmarkLoop sums a loop.", "first")
	r.commit(10000, "BenchmarkLoop sums a loop of ten thousand.", "comment only")

	cfg := Config{Measure: MeasureInstructions, Rounds: 3, MaxRounds: 3, Benchtime: "100x",
		Thresholds: map[string]float64{"instructions/op": 10, "allocs/op": 0}}
	opts := bench.GateOptions{Dir: r.dir, BaseRef: "HEAD~1", Instructions: bench.InstructionOptions{Valgrind: valgrind, Target: 20_000_000}}
	rep, _, err := Measure(context.Background(), opts, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code := rep.Decision.ExitCode(); code != 0 {
		t.Errorf("comment-only change: exit %d, want 0: %+v", code, rep.Decision.Judgements)
	}
	counted := 0
	for _, j := range rep.Decision.Judgements {
		if j.Unit == bench.UnitInstructions {
			counted++
			if j.Verdict != Unchanged || !j.Exact {
				t.Errorf("comment-only change: %s %s (%+.2f%%)", j.Measurement, j.Verdict, 100*j.Change)
			}
		}
	}
	if counted != 2 {
		t.Errorf("%d instruction counts judged, want 2", counted)
	}

	r.commit(13000, "BenchmarkLoop sums a longer loop.", "more work")
	opts.BaseRef = "HEAD~1"
	rep, _, err = Measure(context.Background(), opts, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code := rep.Decision.ExitCode(); code != 1 {
		t.Errorf("30%% more work: exit %d, want 1", code)
	}
	for _, j := range rep.Decision.Judgements {
		if j.Unit != bench.UnitInstructions {
			continue
		}
		want := Unchanged
		if strings.HasPrefix(j.Benchmark, "Loop") {
			want = Regression
		}
		if j.Verdict != want {
			t.Errorf("30%% more work in Loop: %s %s (%+.2f%%, counts %v and %v), want %s", j.Measurement, j.Verdict, 100*j.Change, j.Base, j.Head, want)
		}
	}
}
