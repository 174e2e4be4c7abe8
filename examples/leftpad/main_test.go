package leftpad

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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/testenv"
)

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--mode", "fast"},
		{"--route-labels", "request"},
		{"--nope"},
		{"extra"},
		{"--addr", "127.0.0.1:0", "--pprof-addr", "0.0.0.0:0", "--log", filepath.Join(t.TempDir(), "l")},
		{"--addr", "127.0.0.1:0", "--pprof-addr", "", "--log", filepath.Join(t.TempDir(), "no", "such", "dir", "l")},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), args, &stdout, &stderr)
		if code == 0 {
			t.Errorf("Run(%q) = 0, want failure", args)
		}
		if lines := strings.Count(stderr.String(), "\n"); lines != 1 || !strings.HasPrefix(stderr.String(), "leftpad: ") {
			t.Errorf("Run(%q) stderr = %q, want one line starting with \"leftpad: \"", args, stderr.String())
		}
	}
}

// startupLine matches the line a parent process reads to find the service.
var startupLine = regexp.MustCompile(`^leftpad \((naive|optimized)\) listening on (http://127\.0\.0\.1:\d+), (?:pprof on (http://127\.0\.0\.1:\d+/debug/pprof/)|pprof off)$`)

// TestBinary builds the command, starts it on free ports, reads its startup
// line, puts contended load on it, reads non-empty block and mutex profiles
// from its pprof port and stops it with SIGTERM.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and loads it for seconds")
	}
	goTool := testenv.Tool(t, "go", "install Go to build the example")
	dir := t.TempDir()
	bin := filepath.Join(dir, "leftpad")
	if out, err := exec.Command(goTool, "build", "-o", bin, "./cmd/leftpad").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	logPath := filepath.Join(dir, "access.log")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--mode", "naive", "--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0",
		"--log", logPath, "--statsd", "127.0.0.1:9") // port 9 (discard): nothing listens, packets are dropped
	cmd.Stderr = os.Stderr
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
		t.Fatalf("reading startup line: %v", err)
	}
	m := startupLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
	if m == nil || m[3] == "" {
		t.Fatalf("startup line %q does not match %v", line, startupLine)
	}
	api, pprofURL := m[2], m[3]

	if got := fetch(t, http.DefaultClient, api+"/v1/leftpad/?str=test&len=10&chr=*"); got.body != `{"str":"******test"}` {
		t.Fatalf("GET leftpad: %+v", got)
	}

	// Load with many concurrent clients until the block and mutex
	// profiles have samples: the naive logger's mutex is contended. Block
	// profiling is on only while a profile is being collected, so the
	// block profile is taken over a window of the load.
	deadline := time.Now().Add(30 * time.Second)
	var block, mutex int
	for time.Now().Before(deadline) && (block == 0 || mutex == 0) {
		var wg sync.WaitGroup
		wg.Go(func() { load(t, api+"/v1/leftpad/?str=test&len=50&chr=*", 16, 1500*time.Millisecond) })
		block = samples(t, pprofURL+"block?seconds=1")
		mutex = samples(t, pprofURL+"mutex")
		wg.Wait()
	}
	t.Logf("%d block and %d mutex samples", block, mutex)
	if block == 0 || mutex == 0 {
		t.Errorf("after contended load: %d block and %d mutex samples, want both > 0", block, mutex)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v, want exit status 0", err)
	}
	b, err := os.ReadFile(logPath)
	if err != nil || !bytes.Contains(b, []byte("GET /v1/leftpad/?str=test&len=10&chr=* ")) {
		t.Errorf("access log %s: %v, %.200q", logPath, err, b)
	}
}

// load sends GET url from n concurrent clients for d.
func load(t *testing.T, url string, n int, d time.Duration) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for time.Now().Before(end) {
				resp, err := client.Get(url)
				if err != nil {
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// samples fetches a profile and returns its number of samples.
func samples(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p, err := profile.Parse(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return len(p.Sample)
}

// TestRunInProcess runs the command's run function with port 0 and shuts it
// down through its context.
func TestRunInProcess(t *testing.T) {
	for _, args := range [][]string{
		{"--mode", "optimized"},
		{"--mode", "optimized", "--no-expose"},
		{"--mode", "naive", "--pprof-addr", ""},
		{"--mode", "optimized", "--route-labels", "context"},
		{"--mode", "optimized", "--route-labels", "none"},
		{"--mode", "optimized", "--block-profile-always"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan int, 1)
		all := append([]string{"--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0", "--log", filepath.Join(t.TempDir(), "access.log"), "--statsd", ""}, args...)
		go func() {
			var stderr bytes.Buffer
			code := Run(ctx, all, pw, &stderr)
			if stderr.Len() > 0 {
				t.Errorf("Run(%q) stderr: %s", args, stderr.String())
			}
			pw.Close()
			done <- code
		}()
		line, err := bufio.NewReader(pr).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		m := startupLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if m == nil {
			t.Fatalf("Run(%q): startup line %q", args, line)
		}
		wantPprof := !strings.Contains(strings.Join(args, " "), "--no-expose") && !strings.Contains(strings.Join(args, " "), `--pprof-addr`)
		if (m[3] != "") != wantPprof {
			t.Errorf("Run(%q): startup line %q, want pprof %v", args, line, wantPprof)
		}
		if got := fetch(t, http.DefaultClient, m[2]+"/v1/leftpad/?str=a&len=3"); got.body != `{"str":"  a"}` {
			t.Errorf("Run(%q): GET: %+v", args, got)
		}
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("Run(%q) = %d after cancel, want 0", args, code)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Run(%q) did not return after cancel", args)
		}
	}
}
