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
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/api"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/runupload"
	"github.com/perfscope/perfscope/internal/store"
)

var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func TestBenchUploadAndReadsSQLite(t *testing.T) {
	testBenchUploadAndReads(t, startServer(t, Config{}))
}

func TestBenchUploadAndReadsPostgres(t *testing.T) {
	testBenchUploadAndReads(t, startServer(t, Config{Store: openPostgresBackend(t)}))
}

// testBenchUploadAndReads uploads eight commits, the sixth 50% slower, and
// reads them back through every benchmark endpoint.
func testBenchUploadAndReads(t *testing.T, ts *testServer) {
	var commits []string
	for i := range 8 {
		scale := 1.0
		if i >= 5 {
			scale = 1.5
		}
		commit := strings.Repeat(string(rune('a'+i)), 8) + "00112233"
		commits = append(commits, commit)
		ts.pushBench(t, commit, epoch.Add(time.Duration(i)*time.Hour), benchFixture(6, scale))
	}

	var cs []store.Commit
	ts.getJSON(t, "/api/v1/commits?branch=main", &cs)
	if len(cs) != 8 || cs[0].Hash != commits[0] || cs[7].Hash != commits[7] || cs[0].Machines[0] != "builder" {
		t.Fatalf("commits = %+v", cs)
	}
	ts.getJSON(t, "/api/v1/commits?limit=3", &cs)
	if len(cs) != 3 || cs[2].Hash != commits[7] {
		t.Errorf("latest 3 commits = %+v", cs)
	}

	var benches []store.Benchmark
	ts.getJSON(t, "/api/v1/benchmarks?name=Parse", &benches)
	if len(benches) != 1 || benches[0].Package != "example.com/fixture" || benches[0].Name != "Parse-8" || len(benches[0].Units) != 3 {
		t.Fatalf("benchmarks = %+v", benches)
	}

	var v web.Series
	ts.getJSON(t, "/api/v1/series?package=example.com/fixture&name=Parse-8&unit=sec/op&branch=main", &v)
	if len(v.Commits) != 8 {
		t.Fatalf("series has %d commits, want 8", len(v.Commits))
	}
	if got := v.Commits[0].Median; got != 1001e-9 {
		t.Errorf("first median = %g, want 1001e-9 (median of 1000, 1001, 1002)", got)
	}
	for i, c := range v.Commits {
		if c.Changed != (i == 5) {
			t.Errorf("commit %d changed = %v (delta %v, p %v)", i, c.Changed, c.Delta, c.P)
		}
		if c.Lo == nil || c.Hi == nil || *c.Lo > c.Median || *c.Hi < c.Median {
			t.Errorf("commit %d interval [%v, %v] around %g", i, c.Lo, c.Hi, c.Median)
		}
	}
	if c := v.Commits[5]; c.Better != -1 || c.Previous != commits[4] {
		t.Errorf("the slowdown: better %d, previous %q", c.Better, c.Previous)
	}
	// The same answer from the cache.
	var again web.Series
	ts.getJSON(t, "/api/v1/series?package=example.com/fixture&name=Parse-8&unit=sec/op&branch=main", &again)
	if len(again.Commits) != 8 || !again.Commits[5].Changed {
		t.Errorf("cached series differs: %+v", &again)
	}

	var cmp struct {
		Tables []struct {
			Unit string `json:"unit"`
		} `json:"tables"`
	}
	ts.getJSON(t, "/api/v1/compare?base="+commits[4][:6]+"&head="+commits[5], &cmp)
	if len(cmp.Tables) != 3 {
		t.Errorf("comparison has %d tables, want one per unit: %+v", len(cmp.Tables), cmp)
	}
	code, body := ts.do(t, http.MethodGet, "/api/v1/compare?format=text&base="+commits[4]+"&head="+commits[5], "", "", nil)
	if code != http.StatusOK || !strings.Contains(string(body), "+50.00%") || !strings.Contains(string(body), "Parse-8") {
		t.Errorf("text comparison = %d:\n%s", code, body)
	}
	var samples store.CommitSamples
	ts.getJSON(t, "/api/v1/commits/"+commits[0]+"?unit=allocs/op", &samples)
	if len(samples.Samples) != 2 || len(samples.Samples[0].Values) != 6 {
		t.Errorf("samples of %s = %+v", commits[0], samples)
	}

	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/api/v1/series?package=example.com/fixture&name=Nope-8&unit=sec/op", 404, "no results"},
		{"/api/v1/series?name=Parse-8", 400, "name a metric"},
		{"/api/v1/compare?base=ffff0000&head=" + commits[0], 404, "unknown commit"},
		{"/api/v1/compare?base=" + commits[0], 400, "two commits"},
		{"/api/v1/commits/99999999", 404, "unknown commit"},
		{"/api/v1/commits?limit=x", 400, "limit"},
		{"/api/v1/benchmarks?name=(", 400, "benchmark filter"},
		{"/api/v1/nothing", 404, "no API endpoint"},
	} {
		code, body := ts.do(t, http.MethodGet, tc.path, "", "", nil)
		var e api.Error
		if code != tc.code || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error, tc.want) {
			t.Errorf("GET %s = %d %s; want %d with %q", tc.path, code, body, tc.code, tc.want)
		}
	}
}

func TestUploadErrors(t *testing.T) {
	ts := startServer(t, Config{MaxUpload: 4 << 10})
	good := benchFixture(3, 1)
	big := benchFixture(200, 1)
	for _, tc := range []struct {
		name, query, token, body string
		code                     int
		want                     string
	}{
		{"no token", "?commit=abcd1234", "", good, 401, "needs a token"},
		{"wrong token", "?commit=abcd1234", "pst_wrong", good, 401, "not valid"},
		{"not benchmarks", "?commit=abcd1234", ts.Token, "hello\nBenchmarkX-8 notanumber ns/op\n", 400, "no benchmark results"},
		{"empty", "?commit=abcd1234", ts.Token, "", 400, "no benchmark results"},
		{"no commit", "", ts.Token, good, 400, "no commit"},
		{"bad dirty", "?commit=abcd1234&dirty=maybe", ts.Token, good, 400, "dirty"},
		{"bad time", "?commit=abcd1234&commit_time=yesterday", ts.Token, good, 400, "commit_time"},
		{"two commits", "", ts.Token, "commit: aaaa1111\n" + good + "commit: bbbb2222\n" + good, 400, "disagree"},
		{"too large", "?commit=abcd1234", ts.Token, big, 413, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := ts.do(t, http.MethodPost, "/api/v1/bench"+tc.query, tc.token, "text/plain", strings.NewReader(tc.body))
			if code != tc.code || !strings.Contains(string(body), tc.want) {
				t.Errorf("= %d %s; want %d with %q", code, body, tc.code, tc.want)
			}
		})
	}
	// A body of unknown length over the limit is cut off while read.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/v1/bench?commit=abcd1234", struct{ *strings.Reader }{strings.NewReader(big)})
	req.Header.Set("Authorization", "Bearer "+ts.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.ContentLength == 0 {
		t.Errorf("chunked oversized upload = %d", resp.StatusCode)
	}
	// The file's own commit line is enough.
	code, body := ts.do(t, http.MethodPost, "/api/v1/bench", ts.Token, "text/plain", strings.NewReader("commit: cafe0001\nbranch: dev\n"+good))
	if code != http.StatusCreated || !strings.Contains(string(body), `"branch":"dev"`) {
		t.Errorf("upload with commit line = %d %s", code, body)
	}
}

func TestRunUpload(t *testing.T) {
	ts := startServer(t, Config{})
	dir := makeRunDir(t, "run-one")

	ct, body := multipartRun(t, dir)
	code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ct, body)
	if code != http.StatusCreated || !strings.Contains(string(resp), `"/runs/run-one"`) {
		t.Fatalf("upload = %d %s", code, resp)
	}
	ct, body = multipartRun(t, dir)
	if code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ct, body); code != http.StatusConflict {
		t.Errorf("second upload of the same run = %d %s", code, resp)
	}

	// The same run as a tar.gz, archived from above its directory.
	second := makeRunDir(t, "run-two")
	code, resp = ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, "application/gzip", tarGz(t, second, "run-two/"))
	if code != http.StatusCreated {
		t.Fatalf("tar.gz upload = %d %s", code, resp)
	}

	var runs []store.ProfileRun
	ts.getJSON(t, "/api/v1/runs", &runs)
	if len(runs) != 2 || runs[0].ProfileOK != 2 {
		t.Errorf("runs = %+v", runs)
	}
	code, data := ts.do(t, http.MethodGet, "/api/v1/runs/run-one/profiles/allocs", "", "", nil)
	want, _ := os.ReadFile(filepath.Join(dir, "allocs.pb.gz"))
	if code != http.StatusOK || !bytes.Equal(data, want) {
		t.Errorf("profile download = %d, %d bytes; want the %d uploaded", code, len(data), len(want))
	}
	if _, err := profile.ParseData(data); err != nil {
		t.Errorf("downloaded profile: %v", err)
	}
	code, data = ts.do(t, http.MethodGet, "/api/v1/runs/run-one/profiles/cpu", "", "", nil)
	if code != http.StatusNotFound || !strings.Contains(string(data), "already in use") {
		t.Errorf("missing cpu profile = %d %s; want 404 with the capture's reason", code, data)
	}
	ts.waitAnalysed(t, "run-one")
	code, data = ts.do(t, http.MethodGet, "/api/v1/runs/run-one/report?format=markdown", "", "", nil)
	if code != http.StatusOK || !strings.Contains(string(data), "run-one") {
		t.Errorf("markdown report = %d %s", code, data)
	}

	bad := makeRunDir(t, "run-bad")
	os.WriteFile(filepath.Join(bad, "stray.pb.gz"), want, 0o644)
	for _, tc := range []struct {
		name  string
		files []string
		edit  func()
		code  int
		want  string
	}{
		{"no run.json", []string{"allocs.pb.gz"}, nil, 400, "no run.json"},
		{"missing profile", []string{"run.json", "allocs.pb.gz"}, nil, 400, "no such file"},
		{"unlisted file", nil, nil, 400, "not listed"},
		{"bad name", nil, nil, 400, "run.json and the"},
		{"corrupt profile", []string{"run.json", "allocs.pb.gz", "goroutine_end.pb.gz"}, func() {
			os.WriteFile(filepath.Join(bad, "allocs.pb.gz"), []byte("<html>not a profile</html>"), 0o644)
		}, 400, "not a pprof profile"},
		{"corrupt run.json", []string{"run.json"}, func() {
			os.WriteFile(filepath.Join(bad, "run.json"), []byte("{"), 0o644)
		}, 400, "not a valid run description"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.edit != nil {
				tc.edit()
			}
			ct, body := multipartRun(t, bad, tc.files...)
			if tc.name == "bad name" {
				ct, body = multipartNamed(t, bad, "evil.sh", "run.json")
			}
			code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ct, body)
			if code != tc.code || !strings.Contains(string(resp), tc.want) {
				t.Errorf("= %d %s; want %d with %q", code, resp, tc.code, tc.want)
			}
		})
	}
	if code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, "text/plain", strings.NewReader("x")); code != 400 {
		t.Errorf("plain text run upload = %d %s", code, resp)
	}
	entries, _ := os.ReadDir(filepath.Join(ts.Data, runupload.IncomingDir))
	if len(entries) != 0 {
		t.Errorf("%d failed uploads left files behind", len(entries))
	}
	if _, err := os.Stat(filepath.Join(ts.Data, "run-bad")); err == nil {
		t.Error("a rejected run was stored")
	}
}

// multipartNamed sends the content of file under the part name name.
func multipartNamed(t *testing.T, dir, name, file string) (string, *bytes.Buffer) {
	t.Helper()
	ct, body := multipartRun(t, dir, file)
	return ct, bytes.NewBuffer(bytes.Replace(body.Bytes(), []byte(`filename="`+file+`"`), []byte(`filename="`+name+`"`), 1))
}

// tarGz archives the files of dir under prefix.
func tarGz(t *testing.T, dir, prefix string) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: prefix, Typeflag: tar.TypeDir, Mode: 0o755})
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		tw.WriteHeader(&tar.Header{Name: prefix + e.Name(), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))})
		tw.Write(data)
	}
	tw.Close()
	zw.Close()
	return &buf
}

func TestReadAccess(t *testing.T) {
	ts := startServer(t, Config{})
	ts.pushBench(t, "abcd1234", epoch, benchFixture(3, 1))
	remote := []string{"X-Forwarded-For", "203.0.113.7"}
	if code, _ := ts.do(t, http.MethodGet, "/api/v1/commits", "", "", nil); code != 200 {
		t.Errorf("loopback read = %d", code)
	}
	if code, body := ts.do(t, http.MethodGet, "/api/v1/commits", "", "", nil, remote...); code != 401 || !strings.Contains(string(body), "public-read") {
		t.Errorf("remote read without token = %d %s", code, body)
	}
	if code, _ := ts.do(t, http.MethodGet, "/api/v1/commits", ts.Token, "", nil, remote...); code != 200 {
		t.Errorf("remote read with token = %d", code)
	}
	if code, _ := ts.do(t, http.MethodGet, "/benchmarks", "", "", nil, remote...); code != 401 {
		t.Errorf("remote page without token = %d", code)
	}
	basic := []string{remote[0], remote[1], "Authorization", "Basic " + basicAuth("anyone", ts.Token)}
	if code, _ := ts.do(t, http.MethodGet, "/benchmarks", "", "", nil, basic...); code != 200 {
		t.Errorf("remote page with the token as Basic password = %d", code)
	}

	public := startServer(t, Config{PublicRead: true})
	if code, _ := public.do(t, http.MethodGet, "/api/v1/commits", "", "", nil, remote...); code != 200 {
		t.Errorf("remote read of a public server = %d", code)
	}
	if code, _ := public.do(t, http.MethodPost, "/api/v1/bench?commit=abcd1234", "", "text/plain", strings.NewReader(benchFixture(3, 1)), remote...); code != 401 {
		t.Errorf("write to a public server without a token = %d", code)
	}
}

func basicAuth(user, pw string) string {
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth(user, pw)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Basic ")
}

func TestPagesAndMetrics(t *testing.T) {
	ts := startServer(t, Config{})
	for i := range 6 {
		ts.pushBench(t, "c0ffee0"+string(rune('0'+i)), epoch.Add(time.Duration(i)*time.Hour), benchFixture(6, 1+0.5*float64(i/3)))
	}
	for id, commit := range map[string]string{"run-page": "", "run-base": "c0ffee02", "run-head": "c0ffee03"} {
		dir := makeRunDir(t, id)
		if commit != "" {
			saved, err := run.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			saved.GitCommit = commit
			data, _ := json.Marshal(saved)
			os.WriteFile(filepath.Join(dir, run.File), data, 0o644)
		}
		ct, body := multipartRun(t, dir)
		if code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ct, body); code != 201 {
			t.Fatalf("upload run = %d %s", code, resp)
		}
	}
	// The run pages wait a bounded time for an analysis and answer 503
	// while it runs; on a busy machine the analyses (a build of the
	// module for the compiler's reasons) outlast that wait, so the pages
	// are checked once they are done.
	ts.waitAnalysed(t, "run-page", "run-base", "run-head")
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/benchmarks", 200, "Parse-8"},
		{"/benchmarks?name=(", 200, "benchmark filter"},
		{"/trend?package=example.com/fixture&name=Parse-8", 200, `class="change worse"`},
		{"/trend?package=example.com/fixture&name=Parse-8&unit=B/op&n=all", 200, "<svg"},
		{"/trend?package=example.com/fixture&name=Nope", 404, "No benchmark"},
		{"/trend?package=example.com/fixture&name=Parse-8&n=x", 400, "number of commits"},
		{"/compare?base=c0ffee02&head=c0ffee03", 200, "50.00%"},
		{"/compare?base=c0ffee02&head=deadbeef", 404, "unknown commit"},
		{"/compare?base=c0ffee02&head=c0ffee03", 200, `href="/diff/run-base/run-head/allocs"`},
		{"/diff/run-base/run-head/allocs/top", 200, "alloc_space"},
		{"/compare?base_run=run-base&head_run=run-head", 200, "Diff flame graphs"},
		{"/runs", 200, "run-page"},
		{"/runs/run-page", 200, "goroutine_end"},
		{"/runs/run-page/pprof/allocs/top", 200, "alloc_space"},
		{"/runs/run-page/pprof/allocs/nope", 404, "no view"},
		{"/runs/run-page/pprof/cpu/flamegraph", 404, "already in use"},
		{"/runs/missing", 404, "unknown run"},
		{"/nowhere", 404, "no page"},
		{"/static/style.css", 200, "perfscope dashboard"},
	} {
		code, body := ts.do(t, http.MethodGet, tc.path, "", "", nil)
		if code != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("GET %s = %d, want %d with %q:\n%.6000s", tc.path, code, tc.code, tc.want, body)
		}
	}
	code, metrics := ts.do(t, http.MethodGet, "/metrics", "", "", nil)
	for _, want := range []string{
		`perfscope_http_requests_total{method="GET",route="GET /trend",code="200"} 2`,
		`perfscope_http_requests_total{method="GET",route="GET /runs/{id}",code="404"} 1`,
		`perfscope_uploads_total{kind="bench",outcome="ok"} 6`,
		`perfscope_uploads_total{kind="run",outcome="ok"} 3`,
		`perfscope_http_request_duration_seconds_count{route="GET /benchmarks"} 2`,
	} {
		if code != 200 || !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s:\n%s", want, metrics)
		}
	}
}

// TestPprofConcurrent opens pprof's views of several profiles at once, as
// a team looking at a new run would: building the UIs and serving them must
// not race (go test -race).
func TestPprofConcurrent(t *testing.T) {
	ts := startServer(t, Config{})
	for _, id := range []string{"run-a", "run-b"} {
		ct, body := multipartRun(t, makeRunDir(t, id))
		if code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ct, body); code != 201 {
			t.Fatalf("upload %s = %d %s", id, code, resp)
		}
	}
	paths := []string{
		"/runs/run-a/pprof/allocs/flamegraph", "/runs/run-a/pprof/allocs/top", "/runs/run-b/pprof/goroutine_end/peek",
		"/runs/run-b/pprof/allocs/flamegraph?si=alloc_objects", "/diff/run-a/run-b/allocs/flamegraph", "/runs/run-a/pprof/goroutine_end/top",
	}
	var wg sync.WaitGroup
	errs := make(chan string, 3*len(paths))
	for range 3 {
		for _, p := range paths {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(http.MethodGet, ts.URL+p, nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- p + ": " + err.Error()
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Sprintf("%s: %d", p, resp.StatusCode)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
