package findings

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/capture"
	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

// These tests diagnose runs of the bundled example services that
// `perfscope profile` captured under load (testdata/capture.sh) and check
// that the findings name what each naive mode does wrong and nothing of
// it in the optimized mode. The compiler's diagnostics are built from the
// examples' source, which TestRunsMatchSources holds to the source the
// runs were taken from.

// exampleIndexes holds each example's compiler diagnostics, built once per
// test run.
var exampleIndexes struct {
	mu    sync.Mutex
	built map[string]*exampleIndex
}

type exampleIndex struct {
	once sync.Once
	ix   *escape.Index
	err  error
}

// exampleSource returns the absolute directory of examples/<name>.
func exampleSource(t *testing.T, name string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	if !fileExists(filepath.Join(src, "main.go")) {
		t.Fatalf("examples/%s is not in this checkout", name)
	}
	return src
}

// exampleEscapeIndex builds the compiler diagnostics of examples/<name>
// once: compiling takes as long as it takes, its output does not depend on
// how busy the machine is.
func exampleEscapeIndex(t *testing.T, name string) *escape.Index {
	t.Helper()
	src := exampleSource(t, name)
	exampleIndexes.mu.Lock()
	if exampleIndexes.built == nil {
		exampleIndexes.built = map[string]*exampleIndex{}
	}
	ex := exampleIndexes.built[name]
	if ex == nil {
		ex = &exampleIndex{}
		exampleIndexes.built[name] = ex
	}
	exampleIndexes.mu.Unlock()
	ex.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		var warns []error
		ex.ix, warns = escape.Build(ctx, src, nil, escape.Options{})
		if len(warns) > 0 {
			ex.err = fmt.Errorf("escape index of %s: %v", name, warns)
		}
	})
	if ex.err != nil {
		t.Fatal(ex.err)
	}
	return ex.ix
}

// exampleFindings diagnoses the committed run of examples/<name> in mode
// with the example's compiler diagnostics.
func exampleFindings(t *testing.T, name, mode string) []Finding {
	t.Helper()
	a := workload(t, name+"-"+mode)
	fs, warns := Diagnose(a, exampleEscapeIndex(t, name), Options{AvailableCores: float64(a.Run.TargetCPUs)})
	for _, w := range warns {
		t.Errorf("%s %s: diagnose warning: %v", name, mode, w)
	}
	if a.Run.TargetCPUs == 0 {
		t.Errorf("%s %s: the run does not record the target's CPUs", name, mode)
	}
	for _, f := range fs {
		t.Logf("%s %s: %s", name, mode, describe(f))
	}
	return fs
}

// listeningRE matches the line an example prints when it is ready.
var listeningRE = regexp.MustCompile(`listening on (http://\S+), pprof on (http://\S+)`)

// TestExampleProfileLive profiles the naive leftpad example under real
// load as `perfscope profile` does and diagnoses the run. On a busy
// machine the service gets little CPU, so it checks only what holds
// however busy the machine is: the load was served, the run holds a CPU
// profile that analyses, and every rule runs on it without warnings. What
// the rules find is tested on committed runs above.
func TestExampleProfileLive(t *testing.T) {
	if testing.Short() {
		t.Skip("profiles a service under load for seconds")
	}
	src := exampleSource(t, "leftpad")
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "leftpad")
	build := exec.Command(goCommand(), "build", "-o", bin, "./cmd/leftpad")
	build.Dir = src
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build leftpad: %v\n%s", err, msg)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "-mode", "naive", "-addr", "127.0.0.1:0", "-pprof-addr", "127.0.0.1:0",
		"-statsd", udpSink(t), "-log", filepath.Join(tmp, "access.log"))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	var apiURL, pprofURL string
	select {
	case line := <-lines:
		m := listeningRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("leftpad printed %q, want its addresses", line)
		}
		apiURL, pprofURL = strings.TrimSuffix(m[1], ","), m[2]
	case err := <-exited:
		t.Fatalf("leftpad exited: %v", err)
	case <-ctx.Done():
		t.Fatal("leftpad did not start")
	}

	saved, err := capture.Profile(ctx, capture.Options{
		Load:     loadgen.Config{URL: apiURL + "/v1/leftpad/?str=test&len=24&chr=*", Concurrency: 4, Duration: 2 * time.Second},
		PprofURL: pprofURL,
		OutDir:   filepath.Join(tmp, "run"),
	})
	if err != nil {
		t.Fatalf("profile leftpad: %v", err)
	}
	if saved.Load == nil || saved.Load.Successes == 0 {
		t.Fatalf("no request was served: %+v", saved.Load)
	}
	if !saved.Has(run.KindCPU) {
		t.Fatalf("the run has no CPU profile: %+v", saved.Profiles)
	}
	a, errs := profiles.Analyze(profiles.ReadRun(saved), profiles.Options{})
	for _, err := range errs {
		t.Errorf("analysis: %v", err)
	}
	if a == nil || a.CPU == nil {
		t.Fatal("the run's CPU profile was not analysed")
	}
	fs, warns := Diagnose(a, exampleEscapeIndex(t, "leftpad"), Options{AvailableCores: float64(runtime.NumCPU())})
	for _, w := range warns {
		t.Errorf("diagnose: %v", w)
	}
	for _, f := range fs {
		t.Logf("%s", describe(f))
	}
}

// udpSink receives and drops StatsD packets until the test ends.
func udpSink(t *testing.T) string {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, _, err := conn.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	return conn.LocalAddr().String()
}

// finds reports whether a finding of rule has evidence in function fn
// whose text (summary, call, detail, compiler reasons) contains all of
// words.
func finds(fs []Finding, rule, fn string, words ...string) bool {
	for _, f := range ofRule(fs, rule) {
		for _, ev := range f.Evidence {
			if ev.Function != fn {
				continue
			}
			text := strings.Join(append([]string{plain(f.Summary), ev.Call, plain(ev.Detail)}, ev.Compiler...), "\n")
			ok := true
			for _, w := range words {
				ok = ok && strings.Contains(text, w)
			}
			if ok {
				return true
			}
		}
	}
	return false
}

func TestExampleLeftpad(t *testing.T) {
	named := []string{"concat-loop", "fmt-hot", "built-per-call", "small-writes", "std-logger-lock"}
	t.Run("naive", func(t *testing.T) {
		fs := exampleFindings(t, "leftpad", "naive")
		for _, c := range []struct {
			rule, fn string
			words    []string
		}{
			{"concat-loop", "github.com/perfscope/perfscope/examples/leftpad.leftpad", []string{"in a loop", "escapes to heap"}},
			{"fmt-hot", "github.com/perfscope/perfscope/examples/leftpad.(*statsd).send", []string{"fmt.Sprintf"}},
			{"built-per-call", "github.com/perfscope/perfscope/examples/leftpad.(*statsd).send", []string{"strings.NewReplacer"}},
			{"small-writes", "github.com/perfscope/perfscope/examples/leftpad.(*accessLog).request", []string{"log"}},
			{"std-logger-lock", "github.com/perfscope/perfscope/examples/leftpad.(*accessLog).request", nil},
		} {
			if !finds(fs, c.rule, c.fn, c.words...) {
				t.Errorf("no %s finding in %s mentioning %q", c.rule, c.fn, c.words)
			}
		}
	})
	t.Run("optimized", func(t *testing.T) {
		fs := exampleFindings(t, "leftpad", "optimized")
		for _, rule := range append(named, "concat-hot", "json-reflect", "reread", "alloc-hot", "alloc-package") {
			for _, f := range ofRule(fs, rule) {
				t.Errorf("%s fired on the optimized mode: %s", rule, describe(f))
			}
		}
	})
}

func TestExampleTxsummary(t *testing.T) {
	t.Run("naive", func(t *testing.T) {
		fs := exampleFindings(t, "txsummary", "naive")
		if !finds(fs, "reread", "github.com/perfscope/perfscope/examples/txsummary.summarizeNaive", "reads and parses") {
			t.Errorf("no reread finding in main.summarizeNaive")
		}
		if !finds(fs, "json-reflect", "github.com/perfscope/perfscope/examples/txsummary.summarizeNaive", "interface values") {
			t.Errorf("no json-reflect finding in main.summarizeNaive naming interface decoding")
		}
		// Every amount is parsed into new big.Rat values, and multiplied
		// into another, on every request: the decimal arithmetic.
		if !finds(fs, "alloc-hot", "github.com/perfscope/perfscope/examples/txsummary.parseRatAmount", "math/big") {
			t.Errorf("no alloc-hot finding in parseRatAmount naming math/big")
		}
	})
	t.Run("optimized", func(t *testing.T) {
		fs := exampleFindings(t, "txsummary", "optimized")
		for _, rule := range []string{"reread", "json-reflect", "alloc-hot", "alloc-package"} {
			for _, f := range ofRule(fs, rule) {
				t.Errorf("%s fired on the optimized mode: %s", rule, describe(f))
			}
		}
	})
}
