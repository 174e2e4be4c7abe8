package client

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/server"
	"github.com/perfscope/perfscope/internal/store"
)

// startServer serves a fresh store on loopback and returns its URL, the
// store and a valid token.
func startServer(t *testing.T) (url string, st *store.DB, token string) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "perfscope.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	token, _, err = st.CreateToken(context.Background(), "ci")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, DataDir: filepath.Join(dir, "runs")})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String(), st, token
}

// writeRun saves a run directory with one real allocation profile.
func writeRun(t *testing.T, id string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "allocs.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	saved := run.Run{ID: id, Target: "http://127.0.0.1:1/", Start: time.Now(), End: time.Now(),
		Profiles: []run.ProfileFile{{Kind: run.KindAllocs, File: "allocs.pb.gz"}}}
	data, err := json.Marshal(saved)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, run.File), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPush uploads a benchmark file and a run directory to a real server
// and reads back what it stored.
func TestPush(t *testing.T) {
	url, st, token := startServer(t)
	c, err := New(url+"/", token, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	results := filepath.Join(t.TempDir(), "results.txt")
	os.WriteFile(results, []byte("commit: 0123456789abcdef\nbranch: main\ndirty: false\npkg: example.com/p\n"+
		"BenchmarkA-8 1000 120 ns/op 16 B/op 1 allocs/op\nBenchmarkA-8 1000 121 ns/op 16 B/op 1 allocs/op\n"), 0o644)
	res, err := c.PushBench(ctx, results, api.BenchParams{Machine: "builder"})
	if err != nil || res.Results != 2 || res.Benchmarks != 1 || res.Commit != "0123456789abcdef" ||
		res.Machine != "builder" || !strings.HasPrefix(res.URL, url+"/benchmarks?") {
		t.Errorf("PushBench = %+v, %v", res, err)
	}
	cs, err := st.Commits(ctx, store.Filter{Branch: "main"})
	if err != nil || len(cs) != 1 || cs[0].Hash != "0123456789abcdef" {
		t.Errorf("stored commits = %+v, %v", cs, err)
	}

	dir := writeRun(t, "run-1")
	run, existed, err := c.PushRun(ctx, dir)
	if err != nil || existed || run.ID != "run-1" || run.Profiles != 1 || run.URL != url+"/runs/run-1" {
		t.Errorf("PushRun = %+v, %v, %v", run, existed, err)
	}
	run, existed, err = c.PushRun(ctx, dir)
	if err != nil || !existed || run.URL != url+"/runs/run-1" {
		t.Errorf("second PushRun = %+v, %v, %v; want the run reported as on the server", run, existed, err)
	}

	del, err := c.DeleteRun(ctx, "run-1")
	if err != nil || del.ID != "run-1" || !del.Files {
		t.Errorf("DeleteRun = %+v, %v", del, err)
	}
	if rs, err := st.ProfileRuns(ctx, store.RunFilter{}); err != nil || len(rs) != 0 {
		t.Errorf("runs after DeleteRun = %+v, %v", rs, err)
	}
	if _, err := c.DeleteRun(ctx, "run-1"); err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "unknown run") {
		t.Errorf("deleting it again = %v, want the server's 404", err)
	}
}

// TestPushErrors checks that bad input is told apart from a refusing or
// unreachable server.
func TestPushErrors(t *testing.T) {
	url, _, token := startServer(t)
	ctx := context.Background()
	dir := t.TempDir()
	results := filepath.Join(dir, "results.txt")
	os.WriteFile(results, []byte("commit: abc123\nBenchmarkA-8 1000 120 ns/op\n"), 0o644)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("no results here\n"), 0o644)

	good, _ := New(url, token, nil)
	wrong, _ := New(url, "pst_wrong", nil)
	closed, _ := New("http://127.0.0.1:1", token, nil)
	for _, tc := range []struct {
		name     string
		push     func() error
		badInput bool
		want     string
	}{
		{"wrong token", func() error { _, err := wrong.PushBench(ctx, results, api.BenchParams{}); return err }, false, "token is not valid"},
		{"unreachable", func() error { _, err := closed.PushBench(ctx, results, api.BenchParams{}); return err }, false, "cannot reach"},
		{"no results", func() error { _, err := good.PushBench(ctx, empty, api.BenchParams{}); return err }, true, "no benchmark results"},
		{"not a run", func() error { _, _, err := good.PushRun(ctx, dir); return err }, true, "run.json"},
	} {
		err := tc.push()
		if err == nil || errors.Is(err, ErrBadInput) != tc.badInput || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (bad input %v); want %q", tc.name, err, errors.Is(err, ErrBadInput), tc.want)
		}
	}
	if _, err := New("ftp://x", token, nil); err == nil {
		t.Error("New accepted an ftp:// server")
	}
}
