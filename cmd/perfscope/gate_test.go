package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// perfCLI runs perfscope in-process and returns stdout and the exit
// status main would give.
func perfCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, code, msg := perfCLIMessage(t, args...)
	if msg != "" {
		t.Logf("perfscope: %s", msg)
	}
	return out, code
}

// perfCLIMessage is perfCLI that also returns the message main would
// print.
func perfCLIMessage(t *testing.T, args ...string) (string, int, string) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(io.Discard)
	err := runLine(context.Background(), root, args)
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return out.String(), 0, ""
	case errors.As(err, &ee):
		return out.String(), ee.code, ee.msg
	case errors.As(err, &ue) || isCobraUsageError(err):
		return out.String(), 2, err.Error()
	}
	return out.String(), 1, err.Error()
}

// gateRepo is a git repository with a tiny module whose benchmark's work
// and allocations are set by writeGateBench.
type gateRepo struct {
	t   *testing.T
	dir string
}

func newGateRepo(t *testing.T) *gateRepo {
	t.Helper()
	r := &gateRepo{t: t, dir: t.TempDir()}
	r.write("go.mod", "module example.com/gated\n\ngo 1.26\n")
	r.writeBench(1, 1)
	r.git("init", "-q", "-b", "main")
	r.commit("first")
	return r
}

func (r *gateRepo) write(name, content string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, name), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// writeBench writes a benchmark doing work×(base work) with allocs
// allocations per operation.
func (r *gateRepo) writeBench(work, allocs int) {
	r.t.Helper()
	src := `package gated

import "testing"

var sink []byte
var total int

func BenchmarkWork(b *testing.B) {
	for b.Loop() {
		for range ALLOCS {
			sink = make([]byte, 32)
		}
		s := 0
		for i := range 20000 * WORK {
			s += i % 7
		}
		total += s
	}
}
`
	src = strings.NewReplacer("WORK", strconv.Itoa(work), "ALLOCS", strconv.Itoa(allocs)).Replace(src)
	r.write("work_test.go", src)
}

func (r *gateRepo) git(args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (r *gateRepo) commit(msg string) {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
}

// Short fixed-iteration samples keep these runs to seconds; the effects
// they must detect are large (3× the work, one more allocation), and the
// unchanged case gets a generous time threshold so that noise from a busy
// machine can neither fail it nor leave it undecided. The statistics themselves are tested in
// internal/gate.
var gateFlags = []string{"--measure", "time", "--rounds", "8", "--max-rounds", "8", "--benchtime", "500x"}

func TestGatePassesOnUnchangedTree(t *testing.T) {
	r := newGateRepo(t)
	t.Chdir(r.dir)
	summary := filepath.Join(t.TempDir(), "summary.md")
	out, code := perfCLI(t, append([]string{"gate", "--base", "HEAD", "--threshold", "500", "--summary", summary}, gateFlags...)...)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, out)
	}
	if !strings.Contains(out, "PASS") || !strings.Contains(out, "BenchmarkWork") {
		t.Errorf("output lacks the verdict or the benchmark:\n%s", out)
	}
	md, err := os.ReadFile(summary)
	if err != nil || !strings.Contains(string(md), "perfscope gate") {
		t.Errorf("summary: %v\n%s", err, md)
	}
	// The temporary worktree of the base is gone.
	list, _ := exec.Command("git", "-C", r.dir, "worktree", "list").Output()
	if n := strings.Count(strings.TrimSpace(string(list)), "\n"); n != 0 {
		t.Errorf("worktrees left behind:\n%s", list)
	}
}

func TestGateFailsOnRegression(t *testing.T) {
	r := newGateRepo(t)
	r.writeBench(3, 2)
	r.commit("slower")
	t.Chdir(r.dir)
	out, code := perfCLI(t, append([]string{"gate", "--base", "HEAD~1", "--format", "json"}, gateFlags...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{`"verdict": "regression"`, `"unit": "allocs/op"`, `"exit_code": 1`} {
		if !strings.Contains(out, want) {
			t.Errorf("JSON lacks %s:\n%s", want, out)
		}
	}
}

func TestGateCannotDecide(t *testing.T) {
	t.Run("unknown ref", func(t *testing.T) {
		r := newGateRepo(t)
		t.Chdir(r.dir)
		if _, code := perfCLI(t, append([]string{"gate", "--base", "no-such-branch"}, gateFlags...)...); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
	t.Run("dirty tree", func(t *testing.T) {
		r := newGateRepo(t)
		r.writeBench(2, 1)
		t.Chdir(r.dir)
		if _, code := perfCLI(t, append([]string{"gate", "--base", "HEAD"}, gateFlags...)...); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
	t.Run("base does not build", func(t *testing.T) {
		r := newGateRepo(t)
		r.write("work_test.go", "package gated\n\nfunc broken( {\n")
		r.commit("broken")
		r.writeBench(1, 1)
		r.commit("fixed")
		t.Chdir(r.dir)
		if _, code := perfCLI(t, append([]string{"gate", "--base", "HEAD~1"}, gateFlags...)...); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
	t.Run("benchmark fails in the head", func(t *testing.T) {
		r := newGateRepo(t)
		r.write("fail_test.go", "package gated\n\nimport \"testing\"\n\nfunc BenchmarkBroken(b *testing.B) { b.Fatal(\"broken\") }\n")
		r.commit("broken benchmark")
		t.Chdir(r.dir)
		if _, code := perfCLI(t, append([]string{"gate", "--base", "HEAD~1"}, gateFlags...)...); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
	t.Run("too few rounds", func(t *testing.T) {
		r := newGateRepo(t)
		t.Chdir(r.dir)
		if _, code := perfCLI(t, "gate", "--base", "HEAD", "--measure", "time", "--rounds", "2", "--max-rounds", "2", "--benchtime", "500x"); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
	t.Run("no base flag", func(t *testing.T) {
		if _, code := perfCLI(t, "gate"); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
}

// TestMeasureFlagRejectsUnknown checks that bench and gate refuse a
// measure they do not have before measuring anything.
func TestMeasureFlagRejectsUnknown(t *testing.T) {
	r := newGateRepo(t)
	t.Chdir(r.dir)
	for _, args := range [][]string{
		{"bench", "--measure", "cycles", "--no-store", "."},
		{"bench", "--measure", "auto", "--no-store", "."},
		{"gate", "--base", "HEAD", "--measure", "cycles"},
	} {
		if _, code := perfCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestGateRoundsHelp checks that the help of --rounds and --max-rounds says
// what each measure takes, not one default the instruction gate does not use.
func TestGateRoundsHelp(t *testing.T) {
	help := helpOf(t, []string{"gate", "--help"})
	for _, want := range []string{
		"default 20 measuring time, 5 counting instructions",
		"default 40 measuring time, --rounds counting instructions",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("gate --help does not say %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "(default 20)") || strings.Contains(help, "(default 40)") {
		t.Errorf("gate --help shows one default for both measures:\n%s", help)
	}
}
