package server

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/fetch"
)

// tinyProfile is the smallest valid pprof profile, encoded: a seed small
// enough that the fuzzer mutates rather than minimizes.
func tinyProfile(f *testing.F) []byte {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Sample:     []*profile.Sample{{Value: []int64{1}}},
	}
	var b bytes.Buffer
	if err := p.WriteUncompressed(&b); err != nil {
		f.Fatal(err)
	}
	return b.Bytes()
}

const fuzzRunJSON = `{"id":"r1","profiles":[{"kind":"cpu","file":"cpu.pb.gz"}]}`

// uploadContentTypes are the body types a fuzzed run upload is sent as,
// picked by the input's first byte.
var uploadContentTypes = []string{"multipart/form-data; boundary=b", "application/gzip", "text/plain"}

// FuzzRunUpload feeds run upload bodies to the parsing part of the run
// upload handler (receiving the files and checking the run): it must never
// panic, and whatever it refuses must be the client's fault (400), never a
// server error.
func FuzzRunUpload(f *testing.F) {
	prof := tinyProfile(f)
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	mw.SetBoundary("b")
	w, _ := mw.CreateFormFile("run.json", "run.json")
	w.Write([]byte(fuzzRunJSON))
	w, _ = mw.CreateFormFile("cpu.pb.gz", "cpu.pb.gz")
	w.Write(prof)
	mw.Close()
	f.Add(byte(0), mp.Bytes())

	var tgz bytes.Buffer
	zw := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	for name, data := range map[string][]byte{"./run.json": []byte(fuzzRunJSON), "./cpu.pb.gz": prof} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg})
		tw.Write(data)
	}
	tw.Close()
	zw.Close()
	f.Add(byte(1), tgz.Bytes())
	f.Add(byte(2), []byte("x"))

	// Each upload writes and syncs its files: on a memory file system
	// (Linux's /dev/shm) a sync costs nothing, and the fuzzer runs
	// hundreds of times faster.
	base := f.TempDir()
	if shm, err := os.MkdirTemp("/dev/shm", "perfscope-fuzz"); err == nil {
		base = shm
		f.Cleanup(func() { os.RemoveAll(shm) })
	}
	// Small limits, so that the fuzzer reaches them.
	const maxUpload = 256 << 10
	s := &Server{cfg: Config{MaxUpload: maxUpload, ProfileLimits: fetch.Limits{MaxBytes: 128 << 10, MaxSamples: 1000, MaxLocations: 1000, MaxMemory: 8 << 20}}, analyses: analysis.NewShared(analysis.SharedConfig{Slots: 1})}
	f.Fuzz(func(t *testing.T, kind byte, body []byte) {
		dir, err := os.MkdirTemp(base, "up")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		r := httptest.NewRequest(http.MethodPost, "/api/v1/runs", nil)
		r.Header.Set("Content-Type", uploadContentTypes[int(kind)%len(uploadContentTypes)])
		rc := &runReceiver{dir: dir, max: maxUpload, left: maxUpload}
		err = rc.receive(r, bytes.NewReader(body))
		if written := dirSize(t, dir); written > maxUpload {
			t.Fatalf("wrote %d bytes, over the %d the run may take", written, maxUpload)
		}
		if err == nil {
			var saved any
			saved, err = s.checkRunDir(context.Background(), dir)
			if err == nil && saved == nil {
				t.Fatal("checkRunDir accepted a run but returned none")
			}
		}
		if code := statusOf(err); err != nil && code != http.StatusBadRequest && code != http.StatusRequestEntityTooLarge {
			t.Fatalf("upload refused with status %d, not as the client's fault: %v", code, err)
		}
	})
}

// dirSize is the bytes of the files in dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// FuzzBenchUpload feeds benchmark upload bodies and query strings to the
// parsing part of the bench upload handler: never a panic, every refusal a
// 400, and an accepted run has a commit without spaces or slashes.
func FuzzBenchUpload(f *testing.F) {
	f.Add("commit=abc123&branch=main&time=1700000000", []byte("goos: linux\npkg: x\nBenchmarkA-8  100  12 ns/op  0 B/op\n"))
	f.Add("dirty=maybe", []byte("commit: abc\nBenchmarkA 1 1 ns/op\n"))
	f.Add("", []byte("not a benchmark\n"))
	f.Fuzz(func(t *testing.T, query string, body []byte) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		parsed, err := bench.Parse(bytes.NewReader(body), "upload")
		if err != nil {
			if statusOf(err) != http.StatusBadRequest && !strings.Contains(err.Error(), "upload") {
				t.Fatalf("parse refused without naming the upload: %v", err)
			}
			return
		}
		run, err := benchRunOf(q, parsed)
		if err != nil {
			if statusOf(err) != http.StatusBadRequest {
				t.Fatalf("refused with status %d: %v", statusOf(err), err)
			}
			return
		}
		if run.Commit == "" || strings.ContainsAny(run.Commit, " \t\n/") || len(run.Results) == 0 {
			t.Fatalf("accepted run with commit %q and %d results", run.Commit, len(run.Results))
		}
	})
}
