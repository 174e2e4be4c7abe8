package findings

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/units"
)

// The rule tests diagnose real programs: testdata/<rule>/bad shows a
// problem, testdata/<rule>/good is its fix. Each was run once under the
// profilers by testdata/harness (testdata/capture.sh), and its run is
// committed under testdata/runs/<rule>-<bad|good>, so no verdict depends
// on how busy the machine running the tests is. Lines a rule must name
// carry a "// want: RULE" comment; TestRunsMatchSources fails when a
// program changed after its run was captured.

// runsDir holds the committed runs, one directory per program.
const runsDir = "testdata/runs"

// workloads holds, once loaded, the analyses of the committed runs.
var workloads struct {
	dir    string // temporary directory holding the runs moved to this checkout
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

// runName is the directory under testdata/runs of a program ("concat/bad")
// or an example's mode ("leftpad-naive").
func runName(program string) string { return strings.ReplaceAll(program, "/", "-") }

// workload returns the analysis of a program's committed run, loaded once
// per test run.
func workload(t *testing.T, program string) *profiles.Analysis {
	t.Helper()
	name := runName(program)
	workloads.mu.Lock()
	r := workloads.runs[name]
	if r == nil {
		r = &workloadRun{}
		workloads.runs[name] = r
	}
	workloads.mu.Unlock()
	r.once.Do(func() {
		var moved *run.Run
		if moved, r.err = checkoutRun(name); r.err == nil {
			r.analysis, r.err = analyze(moved)
		}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.analysis
}

// checkoutRun copies the committed run name into the temporary directory
// with the files its profiles name moved to this checkout: they are the
// absolute paths of the checkout that captured it, and source lines and
// compiler reasons are looked up by them.
func checkoutRun(name string) (*run.Run, error) {
	saved, err := run.Load(filepath.Join(runsDir, name))
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	from := saved.Dir
	saved.Dir = filepath.Join(workloads.dir, "runs", name)
	if err := os.MkdirAll(saved.Dir, 0o755); err != nil {
		return nil, err
	}
	for _, pf := range saved.Profiles {
		if pf.File == "" {
			continue
		}
		p, err := (&run.Run{Dir: from, Profiles: []run.ProfileFile{pf}}).Open(pf.Kind)
		if err != nil {
			return nil, err
		}
		moveToCheckout(p, root)
		if _, err := saved.SaveProfile(pf.Kind, p); err != nil {
			return nil, err
		}
	}
	return saved, saved.Save()
}

// moveToCheckout rewrites the module's file names in p to lie under root.
func moveToCheckout(p *profile.Profile, root string) {
	for _, fn := range p.Function {
		for _, dir := range []string{"/internal/findings/testdata/", "/examples/"} {
			if i := strings.Index(fn.Filename, dir); i >= 0 {
				fn.Filename = filepath.Join(root, filepath.FromSlash(fn.Filename[i+1:]))
				break
			}
		}
	}
}

// analyze analyses a run as `perfscope report` would.
func analyze(saved *run.Run) (*profiles.Analysis, error) {
	a, errs := profiles.Analyze(profiles.ReadRun(saved), profiles.Options{})
	if len(errs) > 0 {
		return nil, fmt.Errorf("analyze %s: %v", saved.Dir, errs)
	}
	return a, nil
}

// TestRunsMatchSources fails when a program changed after its run was
// captured: the tests look up lines marked "// want:" in its source, which
// must be the source the profiles were taken from. The digest is the one
// testdata/capture.sh writes.
func TestRunsMatchSources(t *testing.T) {
	harness, err := filepath.Glob(filepath.Join("testdata", "harness", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	load, err := filepath.Glob(filepath.Join("testdata", "harness", "httpload", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	harness = append(harness, load...)
	sources := map[string][]string{}
	for _, program := range programs() {
		files, err := filepath.Glob(filepath.Join("testdata", filepath.FromSlash(program), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		sources[runName(program)] = slices.Concat(files, packageSources(t, program), harness)
	}
	for _, ex := range []string{"leftpad", "txsummary"} {
		files, err := filepath.Glob(filepath.Join("..", "..", "examples", ex, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		command, err := filepath.Glob(filepath.Join("..", "..", "examples", ex, "cmd", ex, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = slices.DeleteFunc(append(files, command...), func(f string) bool { return strings.HasSuffix(f, "_test.go") })
		for _, mode := range []string{"naive", "optimized"} {
			sources[ex+"-"+mode] = files
		}
	}
	dirs, err := os.ReadDir(runsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, ok := sources[d.Name()]; !ok {
			t.Errorf("%s/%s is the run of no program: remove it", runsDir, d.Name())
		}
	}
	for name, files := range sources {
		want, err := os.ReadFile(filepath.Join(runsDir, name, "source.sha256"))
		if err != nil {
			t.Errorf("no run of %s: run bash internal/findings/testdata/capture.sh %s", name, name)
			continue
		}
		h := sha256.New()
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != strings.TrimSpace(string(want)) {
			t.Errorf("the source of %s changed since its run was captured: run bash internal/findings/testdata/capture.sh %s", name, name)
		}
	}
}

// packageSources lists the Go files of the packages under a program's
// directory (a library it calls), in byte order, as capture.sh does.
func packageSources(t *testing.T, program string) []string {
	t.Helper()
	dir := filepath.Join("testdata", filepath.FromSlash(program))
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && filepath.Dir(p) != dir {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(filepath.ToSlash(a), filepath.ToSlash(b)) })
	return out
}

// escapeIndex builds the compiler diagnostics of every program once.
func escapeIndex(t *testing.T) *escape.Index {
	t.Helper()
	workloads.ixOnce.Do(func() {
		var pkgs []string
		for _, p := range programs() {
			pkgs = append(pkgs, "./"+p)
		}
		// A bound against a hung build, not a timing: compiling forty
		// programs with -m takes minutes on a busy machine.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
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
	fs, warns := Diagnose(a, ix, Options{AvailableCores: float64(a.Run.TargetCPUs)})
	for _, w := range warns {
		t.Logf("%s: warning: %v", program, w)
	}
	for _, f := range fs {
		t.Logf("%s: %s", program, describe(f))
	}
	return fs
}

// plain is a Text with its values written plainly (a share as 0.25), for
// tests that look for a finding's words and for their failure messages;
// the rendering layer writes Texts for readers.
func plain(t Text) string {
	var b strings.Builder
	for _, p := range t {
		if p.Kind == Words {
			b.WriteString(p.Words)
		} else {
			fmt.Fprintf(&b, "%v%s", p.Value, p.Unit)
		}
	}
	return b.String()
}

func describe(f Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s %s %s] %s", f.Rule, units.Percent(f.Severity), f.Resource, plain(f.Summary))
	for _, ev := range f.Evidence {
		fmt.Fprintf(&b, "\n\t%s %s call=%s %v %s", ev.Function, ev.Where(), ev.Call, ev.Measures, plain(ev.Detail))
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
	t.Parallel()
	bad := checkFires(t, rule, dir+"/bad", ix)
	checkQuiet(t, rule, dir+"/good", ix)
	return bad
}

// checkFires checks that rule fires on program, naming every line marked
// for it, with complete findings, and returns its findings.
func checkFires(t *testing.T, rule, program string, ix *escape.Index) []Finding {
	t.Helper()
	if _, ok := Lookup(rule); !ok {
		t.Fatalf("no rule %s", rule)
	}
	fs := ofRule(diagnose(t, program, ix), rule)
	if len(fs) == 0 {
		t.Errorf("%s did not fire on %s", rule, program)
	}
	for file, lines := range wantLines(t, program, rule) {
		for _, line := range lines {
			if !named(fs, file, line) {
				t.Errorf("%s on %s does not name %s:%d", rule, program, filepath.Base(file), line)
			}
		}
	}
	for _, f := range fs {
		if f.Severity <= 0 || f.Severity > 1 || plain(f.Summary) == "" || f.Fix.Summary == "" || len(f.Evidence) == 0 {
			t.Errorf("incomplete finding: %s", describe(f))
		}
	}
	return fs
}

// checkQuiet checks that rule does not fire on program.
func checkQuiet(t *testing.T, rule, program string, ix *escape.Index) {
	t.Helper()
	for _, f := range ofRule(diagnose(t, program, ix), rule) {
		t.Errorf("%s fired on %s: %s", rule, program, describe(f))
	}
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

// TestHarnessLive builds and runs one program under testdata/harness as
// testdata/capture.sh does, so that the committed runs can be captured
// again. It checks only what holds however busy the machine is: the
// program writes a run that loads, analyses and diagnoses without errors.
func TestHarnessLive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a profiled program")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "concat-bad")
	if msg, err := exec.Command(goCommand(), "build", "-o", bin, "./testdata/concat/bad").CombinedOutput(); err != nil {
		t.Fatalf("build concat/bad: %v\n%s", err, msg)
	}
	out := filepath.Join(tmp, "run")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if msg, err := exec.CommandContext(ctx, bin, "-out", out).CombinedOutput(); err != nil {
		t.Fatalf("run concat/bad: %v\n%s", err, msg)
	}
	saved, err := run.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{run.KindCPU, run.KindAllocs, run.KindBlock, run.KindMutex, run.KindGoroutineStart, run.KindGoroutineEnd} {
		if !saved.Has(kind) {
			t.Errorf("the run has no %s profile: %+v", kind, saved.Profiles)
		}
	}
	if saved.TargetCPUs != runtime.NumCPU() || saved.Window <= 0 {
		t.Errorf("run.json records %d CPUs and a %gs window, want %d CPUs and the time the work ran", saved.TargetCPUs, saved.Window, runtime.NumCPU())
	}
	a, err := analyze(saved)
	if err != nil {
		t.Fatal(err)
	}
	if a.CPU == nil || a.Allocs == nil {
		t.Fatalf("no CPU or allocation analysis: cpu %v, allocs %v", a.CPU, a.Allocs)
	}
	_, warns := Diagnose(a, nil, Options{AvailableCores: float64(saved.TargetCPUs)})
	for _, w := range warns {
		t.Errorf("diagnose: %v", w)
	}
}
