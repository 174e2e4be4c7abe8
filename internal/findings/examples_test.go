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
)

// These tests profile the bundled example services under load, as
// `perfscope profile` does, and check that the findings name what each
// naive mode does wrong and nothing of it in the optimized mode.

// The load of each capture: short, on loopback. Naive leftpad's StatsD
// formatting is about 1% of its work, so it gets a longer window to be
// sampled reliably.
const (
	exampleLoad     = 3 * time.Second
	exampleLongLoad = 5 * time.Second
	exampleWarmup   = 500 * time.Millisecond
)

// minExampleCPU is the least CPU a capture must hold for its findings to
// be judged: on a machine busy with other work the service gets too
// little CPU for its profile to say anything, and the test skips.
const minExampleCPU = int64(300 * time.Millisecond)

// examples holds each example built once per test run, with its compiler
// diagnostics.
var examples struct {
	mu    sync.Mutex
	built map[string]*example
}

type example struct {
	once sync.Once
	dir  string
	bin  string
	ix   *escape.Index
	err  error
}

// buildExample builds examples/<name> and its escape index once.
func buildExample(t *testing.T, name, src string) *example {
	t.Helper()
	examples.mu.Lock()
	if examples.built == nil {
		examples.built = map[string]*example{}
	}
	ex := examples.built[name]
	if ex == nil {
		ex = &example{dir: filepath.Join(workloads.dir, "examples", name)}
		examples.built[name] = ex
	}
	examples.mu.Unlock()
	ex.once.Do(func() {
		ex.bin = filepath.Join(ex.dir, name)
		build := exec.Command(goCommand(), "build", "-o", ex.bin, "./cmd/"+name)
		build.Dir = src
		if msg, err := build.CombinedOutput(); err != nil {
			ex.err = fmt.Errorf("build %s: %w\n%s", name, err, msg)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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
	return ex
}

// listeningRE matches the line an example prints when it is ready.
var listeningRE = regexp.MustCompile(`listening on (http://\S+), pprof on (http://\S+)`)

// exampleFindings builds examples/<name>, runs it in mode with args,
// profiles it under load on path and diagnoses the run with its compiler
// diagnostics.
func exampleFindings(t *testing.T, name, mode, path string, load time.Duration, args ...string) []Finding {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	if !fileExists(filepath.Join(src, "main.go")) {
		t.Skipf("examples/%s is not in this checkout", name)
	}
	ex := buildExample(t, name, src)
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	args = append([]string{"-mode", mode, "-addr", "127.0.0.1:0", "-pprof-addr", "127.0.0.1:0"}, args...)
	cmd := exec.Command(ex.bin, args...)
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
		case <-time.After(10 * time.Second):
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
			t.Fatalf("%s printed %q, want its addresses", name, line)
		}
		apiURL, pprofURL = strings.TrimSuffix(m[1], ","), m[2]
	case err := <-exited:
		t.Fatalf("%s exited: %v", name, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start", name)
	}

	run, err := capture.Profile(ctx, capture.Options{
		Load:     loadgen.Config{URL: apiURL + path, Concurrency: 8, Duration: load},
		PprofURL: pprofURL,
		Warmup:   exampleWarmup,
		OutDir:   filepath.Join(tmp, "run"),
	})
	if err != nil {
		t.Fatalf("profile %s: %v", name, err)
	}
	a, errs := profiles.Analyze(run, profiles.Options{})
	for _, err := range errs {
		t.Logf("%s %s: analysis warning: %v", name, mode, err)
	}
	if a.CPU == nil || a.CPU.Total < minExampleCPU {
		t.Skipf("%s %s: the CPU profile holds too little (%v): the machine is too busy to tell anything", name, mode, a.CPU)
	}
	fs, warns := Diagnose(a, ex.ix, Options{AvailableCores: float64(runtime.NumCPU())})
	for _, w := range warns {
		t.Errorf("%s %s: diagnose warning: %v", name, mode, w)
	}
	if l := a.Run.Load; l != nil {
		t.Logf("%s %s: %.0f requests/s, %d failures", name, mode, l.Throughput, l.Failures)
	}
	for _, f := range fs {
		t.Logf("%s %s: %s", name, mode, describe(f))
	}
	return fs
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
			text := strings.Join(append([]string{f.Summary, ev.Call, ev.Detail}, ev.Compiler...), "\n")
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
	if testing.Short() {
		t.Skip("profiles a service under load for seconds")
	}
	path := "/v1/leftpad/?str=test&len=24&chr=*"
	named := []string{"concat-loop", "fmt-hot", "built-per-call", "small-writes", "std-logger-lock"}
	t.Run("naive", func(t *testing.T) {
		fs := exampleFindings(t, "leftpad", "naive", path, exampleLongLoad, "-statsd", udpSink(t), "-log", filepath.Join(t.TempDir(), "access.log"))
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
		fs := exampleFindings(t, "leftpad", "optimized", path, exampleLoad, "-statsd", udpSink(t), "-log", filepath.Join(t.TempDir(), "access.log"))
		for _, rule := range append(named, "json-reflect", "reread") {
			for _, f := range ofRule(fs, rule) {
				t.Errorf("%s fired on the optimized mode: %s", rule, describe(f))
			}
		}
	})
}

func TestExampleTxsummary(t *testing.T) {
	if testing.Short() {
		t.Skip("profiles a service under load for seconds")
	}
	data := filepath.Join(t.TempDir(), "transactions.json")
	t.Run("naive", func(t *testing.T) {
		fs := exampleFindings(t, "txsummary", "naive", "/summary", exampleLoad, "-data", data)
		if !finds(fs, "reread", "github.com/perfscope/perfscope/examples/txsummary.summarizeNaive", "reads and parses") {
			t.Errorf("no reread finding in main.summarizeNaive")
		}
		if !finds(fs, "json-reflect", "github.com/perfscope/perfscope/examples/txsummary.summarizeNaive", "interface values") {
			t.Errorf("no json-reflect finding in main.summarizeNaive naming interface decoding")
		}
	})
	t.Run("optimized", func(t *testing.T) {
		fs := exampleFindings(t, "txsummary", "optimized", "/summary", exampleLoad, "-data", data)
		for _, rule := range []string{"reread", "json-reflect"} {
			for _, f := range ofRule(fs, rule) {
				t.Errorf("%s fired on the optimized mode: %s", rule, describe(f))
			}
		}
	})
}
