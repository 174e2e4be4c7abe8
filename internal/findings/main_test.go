package findings

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/units"
)

// The rule tests run real programs: testdata/<rule>/bad shows a problem,
// testdata/<rule>/good is its fix. Each is built and run once per test
// run, the first time a test needs its profiles, under the profilers, by
// testdata/harness. Lines a rule must name carry a "// want: RULE" comment.
// Rule tests run in parallel (two at a time on two cores): a program's
// CPU shares are its own, whatever else runs.

// workloads holds the built programs and, once run, their profiles.
var workloads struct {
	dir    string // temporary directory holding binaries and profiles
	mu     sync.Mutex
	runs   map[string]*workloadRun
	ixOnce sync.Once
	ix     *escape.Index
	ixErrs []error
}

type workloadRun struct {
	once     sync.Once
	analysis *profiles.Analysis
	err      error
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "findings-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	workloads.dir = tmp
	workloads.runs = map[string]*workloadRun{}
	return m.Run()
}

// programs lists testdata/<rule>/{bad,good} as "rule/bad", "rule/good".
func programs() []string {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "*", "*", "main.go"))
	var out []string
	for _, d := range dirs {
		rel, _ := filepath.Rel("testdata", filepath.Dir(d))
		out = append(out, filepath.ToSlash(rel))
	}
	slices.Sort(out)
	return out
}

func goCommand() string {
	if g := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(g) {
		return g
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// buildWorkload builds one program. Symbols and DWARF are left out to
// link faster: the runtime symbolizes its own profiles.
func buildWorkload(program string) error {
	out := filepath.Join(workloads.dir, "bin", strings.ReplaceAll(program, "/", "-"))
	cmd := exec.Command(goCommand(), "build", "-ldflags=-s -w", "-o", out, "./testdata/"+program)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", program, err, msg)
	}
	return nil
}

// workload runs the program once per test run and returns the analysis
// of its profiles.
func workload(t *testing.T, program string) *profiles.Analysis {
	t.Helper()
	workloads.mu.Lock()
	r := workloads.runs[program]
	if r == nil {
		r = &workloadRun{}
		workloads.runs[program] = r
	}
	workloads.mu.Unlock()
	r.once.Do(func() {
		if r.err = buildWorkload(program); r.err == nil {
			r.analysis, r.err = runWorkload(program)
		}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.analysis
}

func runWorkload(program string) (*profiles.Analysis, error) {
	name := strings.ReplaceAll(program, "/", "-")
	out := filepath.Join(workloads.dir, "runs", name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, filepath.Join(workloads.dir, "bin", name), "-out", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("run %s: %w\n%s", program, err, msg)
	}
	return analyzeDir(out, name, time.Since(start))
}

// analyzeDir turns a directory of <kind>.pb.gz files into a run and
// analyses it as `perfscope report` would.
func analyzeDir(dir, id string, took time.Duration) (*profiles.Analysis, error) {
	saved := &run.Run{ID: id, Dir: dir, Target: "http://127.0.0.1/", Start: time.Now().Add(-took), End: time.Now()}
	for _, kind := range []string{run.KindCPU, run.KindAllocs, run.KindBlock, run.KindMutex,
		run.KindGoroutineStart, run.KindGoroutineEnd} {
		if fileExists(filepath.Join(dir, kind+".pb.gz")) {
			saved.Profiles = append(saved.Profiles, run.ProfileFile{Kind: kind, File: kind + ".pb.gz"})
		}
	}
	a, errs := profiles.Analyze(saved, profiles.Options{})
	if len(errs) > 0 {
		return nil, fmt.Errorf("analyze %s: %v", dir, errs)
	}
	if a.CPU != nil {
		a.Run.Window = a.CPU.Seconds
	}
	return a, nil
}

// escapeIndex builds the compiler diagnostics of every program once.
func escapeIndex(t *testing.T) *escape.Index {
	t.Helper()
	workloads.ixOnce.Do(func() {
		var pkgs []string
		for _, p := range programs() {
			pkgs = append(pkgs, "./"+p)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		workloads.ix, workloads.ixErrs = escape.Build(ctx, "testdata", pkgs, escape.Options{})
	})
	if len(workloads.ixErrs) > 0 {
		t.Fatalf("escape index: %v", workloads.ixErrs)
	}
	return workloads.ix
}

// wantLines returns the lines of a program marked "// want: rule", as
// absolute file paths and line numbers.
func wantLines(t *testing.T, program, rule string) map[string][]int64 {
	t.Helper()
	out := map[string][]int64{}
	files, _ := filepath.Glob(filepath.Join("testdata", program, "*.go"))
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		abs, _ := filepath.Abs(file)
		sc := bufio.NewScanner(f)
		for n := int64(1); sc.Scan(); n++ {
			if strings.HasSuffix(sc.Text(), "// want: "+rule) {
				out[abs] = append(out[abs], n)
			}
		}
		f.Close()
	}
	return out
}

// diagnose runs every rule on a program's profiles.
func diagnose(t *testing.T, program string, ix *escape.Index) []Finding {
	t.Helper()
	a := workload(t, program)
	fs, warns := Diagnose(a, ix, Options{AvailableCores: float64(runtime.NumCPU())})
	for _, w := range warns {
		t.Logf("%s: warning: %v", program, w)
	}
	for _, f := range fs {
		t.Logf("%s: %s", program, describe(f))
	}
	return fs
}

func describe(f Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s %s %s] %s", f.Rule, units.Percent(f.Severity), f.Resource, f.Summary)
	for _, ev := range f.Evidence {
		fmt.Fprintf(&b, "\n\t%s %s call=%s %v %s", ev.Function, ev.Where(), ev.Call, ev.Measures, ev.Detail)
		for _, c := range ev.Compiler {
			fmt.Fprintf(&b, "\n\t\tcompiler: %s", c)
		}
		if ev.Source != "" {
			fmt.Fprintf(&b, "\n\t\tsource: %s", ev.Source)
		}
	}
	for _, n := range f.Notes {
		fmt.Fprintf(&b, "\n\tnote: %s", n)
	}
	return b.String()
}

func ofRule(fs []Finding, rule string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// checkRule runs a rule's bad and good programs: the rule must fire on
// bad, naming every line marked for it, and must not fire on good. It
// returns the bad program's findings of the rule for further checks.
func checkRule(t *testing.T, rule, dir string, ix *escape.Index) []Finding {
	t.Helper()
	if _, ok := Lookup(rule); !ok {
		t.Fatalf("no rule %s", rule)
	}
	t.Parallel()
	bad := ofRule(diagnose(t, dir+"/bad", ix), rule)
	if len(bad) == 0 {
		t.Errorf("%s did not fire on %s/bad", rule, dir)
	}
	for file, lines := range wantLines(t, dir+"/bad", rule) {
		for _, line := range lines {
			if !named(bad, file, line) {
				t.Errorf("%s on %s/bad does not name %s:%d", rule, dir, filepath.Base(file), line)
			}
		}
	}
	for _, f := range bad {
		if f.Severity <= 0 || f.Severity > 1 || f.Summary == "" || f.Fix.Summary == "" || len(f.Evidence) == 0 {
			t.Errorf("incomplete finding: %s", describe(f))
		}
	}
	if good := ofRule(diagnose(t, dir+"/good", ix), rule); len(good) > 0 {
		for _, f := range good {
			t.Errorf("%s fired on the fixed program %s/good: %s", rule, dir, describe(f))
		}
	}
	return bad
}

func named(fs []Finding, file string, line int64) bool {
	for _, f := range fs {
		for _, ev := range f.Evidence {
			if ev.File == file && ev.Line == line {
				return true
			}
		}
	}
	return false
}
