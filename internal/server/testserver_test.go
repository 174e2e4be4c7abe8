package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/testenv"
)

// testServer is a real server on a loopback port.
type testServer struct {
	URL   string
	Token string
	Store Backend
	Data  string
	srv   *Server
}

// openSQLiteBackend opens a new SQLite store in a temporary directory.
func openSQLiteBackend(t testing.TB) (*store.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "perfscope.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

// openPostgresBackend opens a store in a new schema of the test database
// named by PERFSCOPE_TEST_POSTGRES, dropped at the end; it skips the test
// when the variable is not set.
func openPostgresBackend(t testing.TB) *store.DB {
	t.Helper()
	dsn := testenv.PostgresSchema(t, "perfscope_server_test")
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // runs before the schema is dropped
	return st
}

// startServer serves cfg (Store and DataDir filled in when empty) on a
// loopback port until the test ends, with one token created.
func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store, _ = openSQLiteBackend(t)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(t.TempDir(), "runs")
	}
	cfg.Logf = t.Logf
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The stores tests serve are all store.Open's, which keep tokens too.
	secret, _, err := cfg.Store.(*store.DB).CreateToken(context.Background(), "test")
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
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return &testServer{URL: "http://" + ln.Addr().String(), Token: secret, Store: cfg.Store, Data: cfg.DataDir, srv: srv}
}

// do sends a request and returns the status and body. token "" sends none.
func (ts *testServer) do(t testing.TB, method, path, token, contentType string, body io.Reader, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// getJSON GETs path, expects 200 and decodes the body into v.
func (ts *testServer) getJSON(t testing.TB, path string, v any) {
	t.Helper()
	code, body := ts.do(t, http.MethodGet, path, "", "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", path, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// pushBench uploads benchmark text for a commit and returns the stored id.
func (ts *testServer) pushBench(t testing.TB, commit string, commitTime time.Time, text string) int64 {
	t.Helper()
	q := url.Values{"commit": {commit}, "branch": {"main"}, "machine": {"builder"}, "commit_time": {commitTime.Format(time.RFC3339)}}
	code, body := ts.do(t, http.MethodPost, "/api/v1/bench?"+q.Encode(), ts.Token, "text/plain", strings.NewReader(text))
	if code != http.StatusCreated {
		t.Fatalf("upload %s = %d: %s", commit, code, body)
	}
	var res api.BenchUpload
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	return res.ID
}

// benchFixture is Go benchmark output of two benchmarks, count samples
// each, whose times are scaled by scale.
func benchFixture(count int, scale float64) string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: example.com/fixture\ncpu: Test CPU\n")
	for i := range count {
		fmt.Fprintf(&b, "BenchmarkParse-8 \t 1000\t %.1f ns/op\t 64 B/op\t 2 allocs/op\n", scale*(1000+float64(i%3)))
		fmt.Fprintf(&b, "BenchmarkEncode/size=10-8 \t 1000\t %.1f ns/op\t %d B/op\t 1 allocs/op\n", 500+float64(i%2), int(16*scale))
	}
	return b.String()
}

// makeRunDir saves a real profiling run: profiles of this test process
// taken with runtime/pprof, and a run.json listing them.
func makeRunDir(t testing.TB, id string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, fn func(io.Writer) error) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := fn(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write("allocs.pb.gz", func(w io.Writer) error { return pprof.Lookup("allocs").WriteTo(w, 0) })
	write("goroutine_end.pb.gz", func(w io.Writer) error { return pprof.Lookup("goroutine").WriteTo(w, 0) })
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	saved := run.Run{ID: id, Target: "http://127.0.0.1:8080/", Start: start, End: start.Add(3 * time.Second), Window: 2,
		Profiles: []run.ProfileFile{
			{Kind: run.KindAllocs, File: "allocs.pb.gz", Samples: 10, Seconds: 2},
			{Kind: run.KindGoroutineEnd, File: "goroutine_end.pb.gz", Samples: 3},
			{Kind: run.KindCPU, Error: "CPU profiling was already in use"},
		}}
	write(run.File, func(w io.Writer) error { return json.NewEncoder(w).Encode(saved) })
	return dir
}

// multipartRun encodes the files of dir (all of them, or those named) as
// multipart/form-data.
func multipartRun(t testing.TB, dir string, names ...string) (string, *bytes.Buffer) {
	t.Helper()
	if names == nil {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			names = append(names, e.Name())
		}
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		part, err := mw.CreateFormFile(n, n)
		if err != nil {
			t.Fatal(err)
		}
		part.Write(data)
	}
	mw.Close()
	return mw.FormDataContentType(), &buf
}

// waitAnalysed waits until each run's analysis is done: its report stops
// answering 503 ("still being analysed"). The deadline is generous, as
// the analyses build a module on a machine that may be busy.
func (ts *testServer) waitAnalysed(t *testing.T, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for _, id := range ids {
		for {
			code, body := ts.do(t, http.MethodGet, "/api/v1/runs/"+id+"/report?format=text", "", "", nil)
			if code != http.StatusServiceUnavailable {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s still being analysed after 10 minutes: %s", id, body)
			}
		}
	}
}
