package main

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

	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/server"
	"github.com/perfscope/perfscope/internal/store"
)

// TestTokenAndPush creates a token with 'perfscope token create', then
// pushes a benchmark file and a run directory to a real server with it.
func TestTokenAndPush(t *testing.T) {
	t.Setenv("PERFSCOPE_TOKEN", "")
	t.Setenv("PERFSCOPE_SERVER", "")
	dir := t.TempDir()
	db := filepath.Join(dir, "perfscope.db")
	out, err := runCLI(t, "token", "create", "--db", db, "--name", "ci")
	token := strings.TrimSpace(out)
	if err != nil || !strings.HasPrefix(token, "pst_") {
		t.Fatalf("token create = %q, %v", out, err)
	}
	if out, err := runCLI(t, "token", "list", "--db", db); err != nil || !strings.Contains(out, "ci") || strings.Contains(out, token) {
		t.Errorf("token list = %q, %v; want the name and not the token", out, err)
	}

	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := server.New(server.Config{Store: st.(server.Backend), DataDir: filepath.Join(dir, "runs")})
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
	defer func() { cancel(); <-done }()
	url := "http://" + ln.Addr().String()

	results := filepath.Join(dir, "results.txt")
	os.WriteFile(results, []byte("commit: 0123456789abcdef\nbranch: main\ndirty: false\npkg: example.com/p\n"+
		"BenchmarkA-8 1000 120 ns/op 16 B/op 1 allocs/op\nBenchmarkA-8 1000 121 ns/op 16 B/op 1 allocs/op\n"), 0o644)
	out, err = runCLI(t, "push", "--server", url, "--token", token, results)
	if err != nil || !strings.Contains(out, "pushed 2 results of 1 benchmarks for commit 0123456789ab") {
		t.Errorf("push results = %q, %v", out, err)
	}
	cs, err := st.Commits(context.Background(), store.Filter{Branch: "main"})
	if err != nil || len(cs) != 1 || cs[0].Hash != "0123456789abcdef" {
		t.Errorf("stored commits = %+v, %v", cs, err)
	}

	runDir := filepath.Join(dir, "run-1")
	os.MkdirAll(runDir, 0o755)
	f, _ := os.Create(filepath.Join(runDir, "allocs.pb.gz"))
	pprof.Lookup("allocs").WriteTo(f, 0)
	f.Close()
	saved := run.Run{ID: "run-1", Target: "http://127.0.0.1:1/", Start: time.Now(), End: time.Now(),
		Profiles: []run.ProfileFile{{Kind: run.KindAllocs, File: "allocs.pb.gz"}}}
	data, _ := json.Marshal(saved)
	os.WriteFile(filepath.Join(runDir, run.File), data, 0o644)
	out, err = runCLI(t, "push", "--server", url, "--token", token, runDir)
	if err != nil || !strings.Contains(out, "pushed run run-1 with 1 profiles: "+url+"/runs/run-1") {
		t.Errorf("push run = %q, %v", out, err)
	}
	t.Setenv("PERFSCOPE_TOKEN", token)
	out, err = runCLI(t, "push", "--server", url, runDir)
	if err != nil || !strings.Contains(out, "already on the server") {
		t.Errorf("second push of the run = %q, %v", out, err)
	}

	for _, tc := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"push", "--server", url, "--token", "pst_wrong", results}, false, "token is not valid"},
		{[]string{"push", "--server", "ftp://x", results}, true, "--server"},
		{[]string{"push", "--server", url, filepath.Join(dir, "missing.txt")}, true, "missing.txt"},
		{[]string{"push", "--server", url, db}, true, "no benchmark results"},
		{[]string{"push", "--server", "http://127.0.0.1:1", results}, false, "cannot reach"},
	} {
		_, err := runCLI(t, tc.args...)
		var ue usageError
		if err == nil || errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v = %v (usage error %v); want %q", tc.args, err, errors.As(err, &ue), tc.want)
		}
	}
	t.Setenv("PERFSCOPE_TOKEN", "")
	if _, err := runCLI(t, "push", "--server", url, results); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("push without a token = %v", err)
	}
}
