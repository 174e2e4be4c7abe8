package server

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/runupload"
	"github.com/perfscope/perfscope/internal/testenv"
)

// maxHostileGrowth bounds how much one hostile upload may grow the test
// process (server and client), the race detector's shadow memory
// included (runupload's tests measure each kind of hostile upload).
const maxHostileGrowth = 160 << 20

// realCPU is the real profile hostile ones are shaped after.
const realCPU = "../findings/testdata/runs/leftpad-naive/cpu.pb.gz"

// TestHostileUploads sends hostile uploads over HTTP: the server answers
// 413 or 400 with one line, writes nothing, keeps serving, and the process
// grows by less than maxHostileGrowth.
func TestHostileUploads(t *testing.T) {
	ts := startServer(t, Config{NoCompiler: true})
	// A tar of more entries than a run has files.
	var entries bytes.Buffer
	zw := gzip.NewWriter(&entries)
	tw := tar.NewWriter(zw)
	for i := range 1000 {
		tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%d/", i), Typeflag: tar.TypeDir, Mode: 0o755})
	}
	tw.Close()
	zw.Close()
	runJSON := testenv.RunJSON(t, "hostile", "cpu")
	for _, tc := range []struct {
		name, contentType string
		body              []byte
		code              int
		want              string
	}{
		{"tar.gz with an 8 GiB profile bomb", "application/gzip", testenv.TarGz("run.json", runJSON, "cpu.pb.gz", testenv.ZeroBomb(8<<10)), 413, "inflated size is over the limit"},
		{"tar.gz of 1000 directories", "application/gzip", entries.Bytes(), 400, "more than 64 entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Logf("upload of %d bytes", len(tc.body))
			mem := testenv.WatchMemory()
			code, body := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, tc.contentType, bytes.NewReader(tc.body))
			grew := mem.Stop()
			t.Logf("answer %d %s; the process grew by %d MiB", code, strings.TrimSpace(string(body)), grew>>20)
			var e api.Error
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("answer %d is not an API error: %s", code, body)
			}
			if code != tc.code || !strings.Contains(e.Error, tc.want) || strings.Contains(e.Error, "\n") {
				t.Errorf("answer %d %q, want %d with one line saying %q", code, e.Error, tc.code, tc.want)
			}
			if grew > maxHostileGrowth {
				t.Errorf("the process grew by %d MiB, over %d MiB", grew>>20, maxHostileGrowth>>20)
			}
			assertNothingStored(t, ts)
		})
	}
	// Still serving, and still taking real runs.
	if code, _ := ts.do(t, http.MethodGet, "/healthz", "", "", nil); code != http.StatusOK {
		t.Fatalf("healthz after the hostile uploads = %d", code)
	}
	id := pushLeftpadRun(t, ts)
	if code, body := ts.do(t, http.MethodGet, "/runs/"+id, "", "", nil); code != http.StatusOK {
		t.Fatalf("run page after the hostile uploads = %d %s", code, body)
	}
}

// assertNothingStored checks that no run is indexed and the data
// directory holds nothing but the empty directory of uploads in progress.
func assertNothingStored(t *testing.T, ts *testServer) {
	t.Helper()
	var runs []any
	ts.getJSON(t, "/api/v1/runs", &runs)
	if len(runs) != 0 {
		t.Errorf("%d runs stored", len(runs))
	}
	err := filepath.Walk(ts.Data, func(path string, fi os.FileInfo, err error) error {
		if err == nil && path != ts.Data && path != filepath.Join(ts.Data, runupload.IncomingDir) {
			t.Errorf("left behind: %s (%d bytes)", path, fi.Size())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSourceConfined: the pages show source only from the server's source
// directory, never a file at a path an uploaded profile names.
func TestSourceConfined(t *testing.T) {
	top := t.TempDir()
	secretDir := filepath.Join(top, "srv", "secret")
	srcDir := filepath.Join(top, "checkout")
	for dir, file := range map[string]string{secretDir: "secret.go", filepath.Join(srcDir, "svc"): "handler.go"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		marker := "SECRET_7f3a"
		if file == "handler.go" {
			marker = "ALLOWED_c41d"
		}
		src := "package x\n\nfunc Work() int {\n\tn := 0 // " + marker + "\n\tfor i := 0; i < 10; i++ {\n\t\tn += i\n\t}\n\treturn n\n}\n"
		if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A CPU profile whose two functions name the secret file by its
	// absolute path and by climbing out of the checkout, and one more a
	// file of the checkout by its build path elsewhere.
	fns := []*profile.Function{
		{ID: 1, Name: "main.Secret", Filename: filepath.Join(secretDir, "secret.go"), StartLine: 3},
		{ID: 2, Name: "main.Climb", Filename: "svc/../../srv/secret/secret.go", StartLine: 3},
		{ID: 3, Name: "example.com/svc.Work", Filename: "/build/ci/svc/handler.go", StartLine: 3},
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10_000_000,
		DurationNanos: 2e9, Function: fns,
	}
	for i, fn := range fns {
		loc := &profile.Location{ID: uint64(i + 1), Address: uint64(0x1000 + i), Line: []profile.Line{{Function: fn, Line: 4}}}
		p.Location = append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{50, 500_000_000}})
	}
	var prof bytes.Buffer
	if err := p.Write(&prof); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Config{NoCompiler: true, SourceDir: srcDir})
	ct, body := testenv.Multipart(t, "run.json", testenv.RunJSON(t, "sourcecheck", "cpu"), "cpu.pb.gz", prof.Bytes())
	if code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ct, bytes.NewReader(body)); code != http.StatusCreated {
		t.Fatalf("upload = %d %s", code, resp)
	}
	pages := map[string]bool{ // path: whether the allowed file's line must show
		"/runs/sourcecheck/pprof/cpu/source":                true,
		"/runs/sourcecheck/pprof/cpu/source?f=main.Secret":  false,
		"/runs/sourcecheck/pprof/cpu/source?f=main.Climb":   false,
		"/runs/sourcecheck":                                 false,
		"/api/v1/runs/sourcecheck/report?format=text&all=1": false,
	}
	for path, allowed := range pages {
		code, page := ts.do(t, http.MethodGet, path, "", "", nil)
		if code != http.StatusOK {
			t.Errorf("GET %s = %d", path, code)
			continue
		}
		if bytes.Contains(page, []byte("SECRET_7f3a")) {
			t.Errorf("GET %s shows the secret file's text", path)
		}
		if allowed && !bytes.Contains(page, []byte("ALLOWED_c41d")) {
			t.Errorf("GET %s does not show the checkout's file: the source view reads nothing at all", path)
		}
	}
}

// TestRunTooLarge: a stored run whose profile is beyond the server's
// limits (stored before them, or under larger ones) is listed, marked, and
// its pages answer; the rest of the run is analysed.
func TestRunTooLarge(t *testing.T) {
	st, _ := openSQLiteBackend(t)
	data := filepath.Join(t.TempDir(), "runs")
	dir := filepath.Join(data, "big")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	small := makeRunDir(t, "big")
	for _, name := range []string{"allocs.pb.gz", "goroutine_end.pb.gz"} {
		b, err := os.ReadFile(filepath.Join(small, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "cpu.pb.gz"), testenv.RealShaped(t, realCPU, 8), 0o644)
	saved, err := run.Load(small)
	if err != nil {
		t.Fatal(err)
	}
	saved.Profiles[2] = run.ProfileFile{Kind: run.KindCPU, File: "cpu.pb.gz"}
	b, _ := json.Marshal(saved)
	os.WriteFile(filepath.Join(dir, run.File), b, 0o644)
	saved.Dir = dir
	if err := st.SaveProfileRun(t.Context(), saved); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Config{Store: st, DataDir: data, NoCompiler: true, ProfileLimits: fetch.Limits{MaxBytes: 4 << 20}})
	code, page := ts.do(t, http.MethodGet, "/runs/big", "", "", nil)
	if code != http.StatusOK || !bytes.Contains(page, []byte("Too large to analyse")) || !bytes.Contains(page, []byte("inflated size is over the limit of 4 MiB")) {
		t.Fatalf("run page = %d, without the too-large notice", code)
	}
	if !bytes.Contains(page, []byte("goroutine")) {
		t.Error("the run page leaves out the profiles within the limits")
	}
	code, home := ts.do(t, http.MethodGet, "/", "", "", nil)
	if code != http.StatusOK || !bytes.Contains(home, []byte("too large to analyse")) {
		t.Errorf("home page = %d, without marking the run too large", code)
	}
	if code, _ := ts.do(t, http.MethodGet, "/runs", "", "", nil); code != http.StatusOK {
		t.Errorf("runs page = %d", code)
	}
	if code, body := ts.do(t, http.MethodGet, "/runs/big/pprof/cpu/top", "", "", nil); code < 400 || code >= 600 || !bytes.Contains(body, []byte("too large")) {
		t.Errorf("pprof view of the too-large profile = %d", code)
	}
}

// TestDeleteRun deletes a run through the API: a token is needed, the
// run leaves the index, its pages and its files.
func TestDeleteRun(t *testing.T) {
	ts := startServer(t, Config{NoCompiler: true})
	id := pushLeftpadRun(t, ts)
	if code, _ := ts.do(t, http.MethodGet, "/runs/"+id+"/pprof/cpu/top", "", "", nil); code != http.StatusOK {
		t.Fatalf("pprof view = %d", code)
	}
	if code, _ := ts.do(t, http.MethodDelete, "/api/v1/runs/"+id, "", "", nil); code != http.StatusUnauthorized {
		t.Errorf("delete without a token = %d, want 401", code)
	}
	code, body := ts.do(t, http.MethodDelete, "/api/v1/runs/"+id, ts.Token, "", nil)
	var res api.RunDeleted
	if code != http.StatusOK || json.Unmarshal(body, &res) != nil || res.ID != id || !res.Files {
		t.Fatalf("delete = %d %s", code, body)
	}
	for _, path := range []string{"/runs/" + id, "/api/v1/runs/" + id, "/runs/" + id + "/pprof/cpu/top"} {
		if code, _ := ts.do(t, http.MethodGet, path, "", "", nil); code != http.StatusNotFound {
			t.Errorf("GET %s after delete = %d, want 404", path, code)
		}
	}
	if _, err := os.Stat(filepath.Join(ts.Data, id)); !os.IsNotExist(err) {
		t.Errorf("the run's directory is still there: %v", err)
	}
	if code, _ := ts.do(t, http.MethodDelete, "/api/v1/runs/"+id, ts.Token, "", nil); code != http.StatusNotFound {
		t.Errorf("deleting again = %d, want 404", code)
	}
	if code, _ := ts.do(t, http.MethodDelete, "/api/v1/runs/..", ts.Token, "", nil); code < 400 || code >= 500 {
		t.Errorf("deleting .. = %d, want a 4xx", code)
	}
}
