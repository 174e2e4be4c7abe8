package txsummary

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/testenv"
)

func TestRunBadFlags(t *testing.T) {
	data := filepath.Join(t.TempDir(), "d.json")
	if err := os.WriteFile(data, []byte(`{"users":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--mode", "fast"},
		{"--nope"},
		{"extra"},
		{"--addr", "127.0.0.1:0", "--pprof-addr", "0.0.0.0:0", "--data", data},
		{"--addr", "127.0.0.1:0", "--data", filepath.Join(data, "d.json")}, // a file as directory
		{"-gen", filepath.Join(t.TempDir(), "no", "such", "dir", "d.json")},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), args, &stdout, &stderr)
		if code == 0 {
			t.Errorf("Run(%q) = 0, want failure", args)
		}
		if strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), "txsummary: ") {
			t.Errorf("Run(%q) stderr = %q, want one line starting with \"txsummary: \"", args, stderr.String())
		}
	}
}

func TestRunGen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.json")
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"-gen", path}, &stdout, &stderr); code != 0 {
		t.Fatalf("run -gen = %d: %s", code, stderr.String())
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "d.json")
	if err := writeDataset(again, defaultUsers); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("two generated data sets differ")
	}
}

var startupLine = regexp.MustCompile(`^txsummary \((naive|optimized)\) listening on (http://127\.0\.0\.1:\d+), (?:pprof on (http://127\.0\.0\.1:\d+/debug/pprof/)|pprof off)$`)

// TestBinary builds the command, starts it on free ports with a data set it
// generates, reads its startup line, queries it and its pprof port, and
// stops it with SIGTERM.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool := testenv.Tool(t, "go", "install Go to build the example")
	dir := t.TempDir()
	bin := filepath.Join(dir, "txsummary")
	if out, err := exec.Command(goTool, "build", "-o", bin, "./cmd/txsummary").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, m := range modes {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--mode", m.String(), "--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0",
			"--data", filepath.Join(dir, "data.json"))
		// Only the first start, which generates the data set, writes to
		// stderr before its startup line.
		var stderrLine func() string
		if m == naive {
			pipe, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderrLine = func() string { l, _ := bufio.NewReader(pipe).ReadString('\n'); return l }
		} else {
			cmd.Stderr = os.Stderr
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			t.Fatalf("%v: reading startup line: %v", m, err)
		}
		sm := startupLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if sm == nil || sm[1] != m.String() || sm[3] == "" {
			t.Fatalf("%v: startup line %q does not match %v", m, line, startupLine)
		}
		// The first start generates the data set and says so on stderr.
		if stderrLine != nil {
			if l := stderrLine(); !strings.Contains(l, "generated data set") {
				t.Errorf("first start: stderr %q, want a note about the generated data set", l)
			}
		}

		resp, err := http.Get(sm[2] + "/summary")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.HasPrefix(body, []byte(`{"users":2700,`)) {
			t.Errorf("%v: GET /summary: %s %s", m, resp.Status, body)
		}

		resp, err = http.Get(sm[3] + "heap")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := profile.Parse(resp.Body); err != nil {
			t.Errorf("%v: heap profile: %v", m, err)
		}
		resp.Body.Close()

		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("%v: after SIGTERM: %v, want exit status 0", m, err)
		}
	}
}
