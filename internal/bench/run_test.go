package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeModule creates a module in dir from name → content.
func writeModule(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// git runs git in dir with a fixed identity, failing the test on error.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

const smallModule = `module example.com/small

go 1.26
`

const smallBench = `package small

import "testing"

var sink []byte

func BenchmarkAlloc(b *testing.B) {
	for b.Loop() {
		sink = make([]byte, 64)
	}
}

func BenchmarkSub(b *testing.B) {
	b.Run("n=1", func(b *testing.B) {
		for b.Loop() {
			sink = sink[:0]
		}
	})
}
`

func TestRun(t *testing.T) {
	dir := t.TempDir()
	writeModule(t, dir, map[string]string{
		"go.mod":               smallModule,
		"small_test.go":        smallBench,
		"notests/notests.go":   "package notests\n",
		"failing/fail_test.go": "package failing\n\nimport \"testing\"\n\nfunc BenchmarkBoom(b *testing.B) { b.Fatal(\"boom\") }\n",
	})
	git(t, dir, "init", "-q", "-b", "trunk")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "init")

	var events []Progress
	out := filepath.Join(dir, "results", "r.txt")
	run, err := Run(context.Background(), Options{
		Dir: dir, Packages: []string{"./..."}, Count: 2, Benchtime: "100x",
		CPUProfile: true, MemProfile: true, Output: out,
		Progress: func(p Progress) { events = append(events, p) },
	})
	if err == nil || !strings.Contains(err.Error(), "example.com/small/failing") {
		t.Fatalf("error %v, want one naming the failing package", err)
	}
	if run == nil {
		t.Fatal("no run returned with the failure")
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"commit: ", "branch: trunk\n", "dirty: false\n", "go: go1.", "pkg: example.com/small\n", "BenchmarkAlloc-", "BenchmarkSub/n=1-"} {
		if !strings.Contains(text, want) {
			t.Errorf("results file lacks %q:\n%s", want, text)
		}
	}
	if run.Meta.Commit == "" || run.Meta.Branch != "trunk" || run.Meta.Dirty || run.Meta.GoVersion == "" || run.Meta.Machine == "" {
		t.Errorf("incomplete metadata %+v", run.Meta)
	}
	if n := len(run.Results.Results); n != 4 {
		t.Errorf("%d results, want 4 (2 benchmarks × count 2)", n)
	}
	for _, r := range run.Results.Results {
		if r.GetConfig("commit") != run.Meta.Commit {
			t.Errorf("result %s lacks the commit key", r.Name)
		}
	}
	if len(run.Packages) != 2 {
		t.Fatalf("benchmarked %d packages, want 2 (notests has no tests)", len(run.Packages))
	}
	for _, p := range run.Packages {
		if p.ImportPath == "example.com/small" {
			for _, f := range []string{p.CPUProfile, p.MemProfile} {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("profile: %v", err)
				}
			}
		}
	}
	var started, done int
	for _, e := range events {
		if e.Done {
			done++
		} else {
			started++
		}
	}
	if started < 4 || done != 4 {
		t.Errorf("progress: %d starts, %d ends; want ≥4 and 4", started, done)
	}
	// Three top-level benchmarks in the job (Alloc and Sub, then the
	// failing package's Boom), numbered in the order they run.
	last := 0
	for _, e := range events {
		if e.Benchmarks != 3 || e.BenchmarkIndex < last || e.BenchmarkIndex < 1 || e.BenchmarkIndex > 3 {
			t.Errorf("progress event %+v after benchmark %d; want benchmark k of 3, k never going back", e, last)
		}
		last = e.BenchmarkIndex
		if strings.HasPrefix(e.Benchmark, "BenchmarkSub") && e.BenchmarkIndex != 2 {
			t.Errorf("%s is benchmark %d, want 2", e.Benchmark, e.BenchmarkIndex)
		}
	}
	// Nothing but the results directory may be left in the module.
	if _, err := os.Stat(filepath.Join(dir, "small.test")); err == nil {
		t.Error("test binary left in the module directory")
	}
}

func TestParseSkipsMalformedLines(t *testing.T) {
	in := "pkg: x\nBenchmarkA-2 \t 10 \t 100 ns/op\nBenchmarkB-2 \t ten \t 100 ns/op\nBenchmarkC-2 \t 10 \t 5 ns/op \t 7\nBenchmarkD-2 \t 10 \t 200 ns/op\nBenchmarkE-2 \t 10 \t NaN ns/op\nBenchmarkF-2 \t -1 \t 5 ns/op\n"
	res, err := Parse(strings.NewReader(in), "f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 2 {
		t.Errorf("%d results, want 2", len(res.Results))
	}
	if len(res.Warnings) != 4 {
		t.Fatalf("%d warnings, want 4: %v", len(res.Warnings), res.Warnings)
	}
	for i, line := range []string{"f.txt:3:", "f.txt:4:", "f.txt:6:", "f.txt:7: iteration count -1"} {
		if !strings.HasPrefix(res.Warnings[i].Error(), line) {
			t.Errorf("warning %q does not name %s", res.Warnings[i], line)
		}
	}
}
