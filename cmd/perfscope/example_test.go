package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/demo"
)

// TestExampleServes starts each bundled example with 'perfscope example'
// on free ports and checks that its API and its pprof endpoint answer.
func TestExampleServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perfscope and runs the examples")
	}
	bin := buildPerfscope(t)
	dir := t.TempDir()
	startup := regexp.MustCompile(`listening on (http://\S+), pprof on (http://\S+)`)
	for _, ex := range []struct {
		name, path string
		flags      []string
	}{
		{"leftpad", "/v1/leftpad/?str=test&len=10&chr=*", []string{"--log", filepath.Join(dir, "access.log"), "--statsd", ""}},
		{"txsummary", "/summary", []string{"--data", filepath.Join(dir, "data.json")}},
	} {
		t.Run(ex.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			args := append([]string{"example", ex.name, "--mode", "optimized",
				"--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0"}, ex.flags...)
			cmd := exec.CommandContext(ctx, bin, args...)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				_ = cmd.Process.Signal(os.Interrupt)
				if err := cmd.Wait(); err != nil {
					t.Errorf("perfscope example %s after SIGINT: %v, want exit 0", ex.name, err)
				}
			}()
			out := bufio.NewReader(stdout)
			line, err := out.ReadString('\n')
			m := startup.FindStringSubmatch(line)
			if err != nil || m == nil {
				t.Fatalf("startup line %q, %v", line, err)
			}
			hint, err := out.ReadString('\n')
			wantHint := "try: perfscope profile --pprof " + m[2] + " '" + m[1] + demo.APIPath[ex.name] + "'\n"
			if err != nil || hint != wantHint {
				t.Fatalf("line after the startup line: %q, %v; want %q", hint, err, wantHint)
			}
			for _, url := range []string{m[1] + ex.path, m[2] + "cmdline"} {
				resp, err := http.Get(url)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s: %s", url, resp.Status)
				}
			}
			// The hint, pasted (its one quoted word unquoted as a shell
			// would), profiles the example: every request answered, a
			// report printed.
			words := strings.Fields(strings.TrimPrefix(strings.TrimSpace(hint), "try: perfscope "))
			words[len(words)-1] = strings.Trim(words[len(words)-1], "'")
			words = append(words, "-d", "2s", "--no-source", "--out", filepath.Join(t.TempDir(), "run"))
			prof := exec.CommandContext(ctx, bin, words...)
			report, err := prof.CombinedOutput()
			if err != nil {
				t.Fatalf("perfscope %s: %v\n%s", strings.Join(words, " "), err, report)
			}
		})
	}
}

// TestExampleHelpAndErrors checks that 'perfscope example --help' says
// where each example serves its profiles and that an unknown example is a
// usage error.
func TestExampleHelpAndErrors(t *testing.T) {
	out, code := perfCLI(t, "example", "--help")
	for _, want := range []string{"leftpad", "txsummary", "127.0.0.1:6060/debug/pprof/", "127.0.0.1:6061/debug/pprof/"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("example --help (exit %d) does not mention %s:\n%s", code, want, out)
		}
	}
	if _, code := perfCLI(t, "example", "nosuch"); code != 2 {
		t.Errorf("example nosuch: exit %d, want 2", code)
	}
	// A port another program holds: the error says which flag moves it.
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	taken := held.Addr().String()
	dir := t.TempDir()
	for flag, args := range map[string][]string{
		"--pprof-addr": {"--addr", "127.0.0.1:0", "--pprof-addr", taken},
		"--addr":       {"--addr", taken, "--pprof-addr", "127.0.0.1:0"},
	} {
		args = append([]string{"example", "leftpad", "--log", filepath.Join(dir, "access.log"), "--statsd", ""}, args...)
		root := newRootCmd()
		var out strings.Builder
		root.SetOut(io.Discard)
		root.SetErr(&out)
		err := runLine(context.Background(), root, args)
		var ee exitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.code
		}
		want := "hint: another program holds the port: choose another with " + flag + ", or " + flag + " 127.0.0.1:0 for any free one"
		if code != 1 || !strings.Contains(out.String(), "address already in use") || !strings.Contains(out.String(), want) {
			t.Errorf("%s on a taken port: exit %d (%v), want 1 and %q:\n%s", flag, code, err, want, &out)
		}
	}
}

// TestDemoOutsideCheckout installs nothing but the binary: run from an
// empty directory, the demo must exit 0 with the side-by-side table and
// (--full) both whole reports, the compiler's reasons built from the
// embedded source.
func TestDemoOutsideCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perfscope and profiles the example twice")
	}
	bin := buildPerfscope(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "demo", "-d", "2s", "-c", "2", "--full")
	cmd.Dir = t.TempDir()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("perfscope demo: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"throughput", "allocations per request", "=== leftpad --mode naive ==="} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	// Which findings a 2-second load brings out depends on how busy the
	// machine lets the service be; that the compiler's reasons were built
	// does not: no note may say they are missing.
	for _, missing := range []string{"compiler reasons unavailable", "Compiler reasons are not shown"} {
		if strings.Contains(string(out), missing) || strings.Contains(stderr.String(), missing) {
			t.Errorf("the demo's findings lack the compiler's reasons (%q):\n%s\n%s", missing, out, stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "for compiler diagnostics") {
		t.Errorf("no status line before the compiler's build on stderr:\n%s", stderr.String())
	}
}

// TestVersion checks that 'perfscope version' names the module and the Go
// version it was built with.
func TestVersion(t *testing.T) {
	out, code := perfCLI(t, "version")
	for _, want := range []string{"perfscope ", "github.com/perfscope/perfscope", "go1."} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("version (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
}
