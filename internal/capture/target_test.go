package capture

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"runtime"
	rpprof "runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"
)

// Targets run in child processes (this test binary re-executed): each gets
// its own CPU profiler, its own cumulative block and mutex profiles and its
// own profiling rates, so tests cannot see each other's profiles, and a
// target can be killed mid-run like a crashing service.
const targetEnv = "PERFSCOPE_CAPTURE_TEST_TARGET"

func TestMain(m *testing.M) {
	if spec := os.Getenv(targetEnv); spec != "" {
		serveTarget(spec)
		return
	}
	os.Exit(m.Run())
}

// A targetSpec says how a child target behaves.
type targetSpec struct {
	BlockRate     int               // runtime.SetBlockProfileRate; 0 leaves it off
	MutexFraction int               // runtime.SetMutexProfileFraction; 0 leaves it off
	CPUBusy       bool              // hold the CPU profiler so pprof's CPU endpoint refuses
	PprofApart    bool              // serve pprof on a second listener; the app answers 404 there
	Broken        map[string]string // pprof endpoint name -> "html", "404" or "garbage"
}

// A target is a running child target.
type target struct {
	URL      string // the application, e.g. http://127.0.0.1:4321/work
	PprofURL string // its pprof base URL
	cmd      *exec.Cmd
	stdin    io.Closer
}

// Kill stops the target abruptly, as a crash would.
func (tg *target) Kill() {
	_ = tg.cmd.Process.Kill()
	_ = tg.cmd.Wait()
}

// startTarget starts a child target and stops it when the test ends.
func startTarget(t *testing.T, spec targetSpec) *target {
	t.Helper()
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), targetEnv+"="+string(js))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tg := &target{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		stdin.Close()
		tg.Kill()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("start target: %v", err)
	}
	if _, err := fmt.Sscanf(line, "%s %s", &tg.URL, &tg.PprofURL); err != nil {
		t.Fatalf("start target: %q: %v", line, err)
	}
	return tg
}

// serveTarget is the child: it serves until its stdin closes.
func serveTarget(specJSON string) {
	var spec targetSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "target:", err)
		os.Exit(2)
	}
	runtime.SetBlockProfileRate(spec.BlockRate)
	runtime.SetMutexProfileFraction(spec.MutexFraction)
	if spec.CPUBusy {
		if err := rpprof.StartCPUProfile(io.Discard); err != nil {
			fmt.Fprintln(os.Stderr, "target:", err)
			os.Exit(2)
		}
	}

	app := http.NewServeMux()
	app.HandleFunc("/work", newWork())
	prof := http.NewServeMux()
	prof.HandleFunc("/debug/pprof/", pprof.Index)
	prof.HandleFunc("/debug/pprof/profile", pprof.Profile)
	for _, name := range []string{"allocs", "heap", "block", "mutex", "goroutine"} {
		var h http.Handler = pprof.Handler(name)
		switch spec.Broken[name] {
		case "html":
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				io.WriteString(w, "<!DOCTYPE html><html><body>Welcome to our shop</body></html>")
			})
		case "404":
			h = http.NotFoundHandler()
		case "garbage":
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Write([]byte("\x00\x01garbage\xff\xfe not a profile"))
			})
		}
		prof.Handle("/debug/pprof/"+name, h)
	}

	listen := func(h http.Handler) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "target:", err)
			os.Exit(2)
		}
		go http.Serve(ln, h)
		return "http://" + ln.Addr().String()
	}
	var appURL, pprofURL string
	if spec.PprofApart {
		appURL = listen(app)
		pprofURL = listen(prof) + "/debug/pprof/"
	} else {
		app.Handle("/debug/pprof/", prof)
		appURL = listen(app)
		pprofURL = appURL + "/debug/pprof/"
	}
	fmt.Printf("%s/work %s\n", appURL, pprofURL)
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// newWork returns a handler that burns some CPU, allocates and contends on
// a lock shared by concurrent requests, so every profile has something to
// show; ?sleep=D adds a sleep, to stretch request-bounded loads over a
// predictable time.
func newWork() http.HandlerFunc {
	var mu sync.Mutex
	var shared [32]byte
	return func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 16<<10)
		for i := range buf {
			buf[i] = byte(i)
		}
		sum := sha256.Sum256(buf)
		for range 20 {
			sum = sha256.Sum256(append(buf[:1024], sum[:]...))
		}
		mu.Lock()
		for range 5 {
			shared = sha256.Sum256(shared[:])
		}
		mu.Unlock()
		if d, err := time.ParseDuration(r.URL.Query().Get("sleep")); err == nil {
			time.Sleep(d)
		}
		io.WriteString(w, strings.Repeat("x", 64))
	}
}
