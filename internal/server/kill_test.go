package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/runupload"
	"github.com/perfscope/perfscope/internal/store"
)

// childEnv, when set, makes the test binary a server process for
// TestKilledServerKeepsAcknowledgedUploads instead of running tests.
const childEnv = "PERFSCOPE_SERVER_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChildServer())
	}
	os.Exit(m.Run())
}

// runChildServer serves the store and data directory named in the
// environment, prints its address, and exits by itself after a minute so
// that a failed test leaves no process behind.
func runChildServer() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, os.Getenv("PERFSCOPE_SERVER_TEST_DB"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	srv, err := New(Config{Store: st, DataDir: os.Getenv("PERFSCOPE_SERVER_TEST_DATA"),
		Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("listening %s\n", ln.Addr())
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestKilledServerKeepsAcknowledgedUploads uploads benchmark runs and
// profiling runs from several clients to a server in another process, kills
// that process with SIGKILL mid-stream, and checks that every upload it
// acknowledged is stored whole.
func TestKilledServerKeepsAcknowledgedUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	dir := t.TempDir()
	dbPath, dataDir := filepath.Join(dir, "perfscope.db"), filepath.Join(dir, "runs")
	st, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := st.CreateToken(context.Background(), "kill-test")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "PERFSCOPE_SERVER_TEST_DB="+dbPath, "PERFSCOPE_SERVER_TEST_DATA="+dataDir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening ") {
		t.Fatalf("child server did not start: %q, %v", line, err)
	}
	ts := &testServer{URL: "http://" + strings.TrimSpace(strings.TrimPrefix(line, "listening ")), Token: token}

	// Each benchmark upload is 40 benchmarks × 3 units × 5 samples, so
	// that a kill can land inside a transaction.
	text := func(i int) string {
		var b strings.Builder
		b.WriteString("pkg: example.com/kill\n")
		for n := range 40 {
			for s := range 5 {
				fmt.Fprintf(&b, "BenchmarkK%02d-8 1000 %d ns/op %d B/op 3 allocs/op\n", n, 1000+i+s, 64+n)
			}
		}
		return b.String()
	}
	runDir := makeRunDir(t, "template")
	template, err := run.Load(runDir)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu        sync.Mutex
		ackedBS   []string // commits whose upload was acknowledged
		ackedRuns []string
		wg        sync.WaitGroup
		stop      = make(chan struct{})
	)
	client := &http.Client{Timeout: 10 * time.Second}
	post := func(path, ct string, body *strings.Reader) bool {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+path, body)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusCreated
	}
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				commit := fmt.Sprintf("%08x%04x", w, i)
				if post("/api/v1/bench?"+url.Values{"commit": {commit}}.Encode(), "text/plain", strings.NewReader(text(i))) {
					mu.Lock()
					ackedBS = append(ackedBS, commit)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprintf("run-%04d", i)
			saved := *template
			saved.ID = id
			data, _ := json.Marshal(saved)
			os.WriteFile(filepath.Join(runDir, run.File), data, 0o644)
			ct, body := multipartRun(t, runDir)
			if post("/api/v1/runs", ct, strings.NewReader(body.String())) {
				mu.Lock()
				ackedRuns = append(ackedRuns, id)
				mu.Unlock()
			}
		}
	}()

	// Kill once enough uploads are acknowledged, while more are in flight.
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n, r := len(ackedBS), len(ackedRuns)
		mu.Unlock()
		if (n >= 30 && r >= 5) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	cmd.Wait()
	close(stop)
	wg.Wait()
	t.Logf("killed after %d benchmark uploads and %d run uploads were acknowledged", len(ackedBS), len(ackedRuns))
	if len(ackedBS) == 0 || len(ackedRuns) == 0 {
		t.Fatal("nothing was acknowledged before the kill")
	}

	// Everything acknowledged is there, whole; a new server starts on
	// what the killed one left and serves it.
	after := startServer(t, Config{Store: reopen(t, dbPath), DataDir: dataDir})
	ctx := context.Background()
	for _, commit := range ackedBS {
		cs, err := after.Store.CommitSamples(ctx, commit, store.Filter{})
		if err != nil {
			t.Errorf("acknowledged commit %s: %v", commit, err)
			continue
		}
		if len(cs.Samples) != 120 || len(cs.Samples[0].Values) != 5 {
			t.Errorf("acknowledged commit %s has %d metrics, want 120", commit, len(cs.Samples))
		}
	}
	for _, id := range ackedRuns {
		code, body := after.do(t, http.MethodGet, "/api/v1/runs/"+id+"/profiles/allocs", "", "", nil)
		if code != http.StatusOK {
			t.Errorf("acknowledged run %s: %d %s", id, code, body)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dataDir, runupload.IncomingDir)); len(entries) != 0 {
		t.Errorf("%d partial uploads left in %s after restart", len(entries), runupload.IncomingDir)
	}
}

func reopen(t *testing.T, path string) *store.DB {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
