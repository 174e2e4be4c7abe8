package runupload

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"mime/multipart"
	"os"
	"testing"

	"github.com/google/pprof/profile"

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

// FuzzReceive feeds run upload bodies to Receive: it must never panic,
// never write more than the limit, and whatever it refuses must be the
// sender's fault (an *InputError), never its own failure.
func FuzzReceive(f *testing.F) {
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
	lim := Limits{MaxBytes: maxUpload, Profiles: fetch.Limits{MaxBytes: 128 << 10, MaxSamples: 1000, MaxLocations: 1000, MaxMemory: 8 << 20}}
	f.Fuzz(func(t *testing.T, kind byte, body []byte) {
		dir, err := os.MkdirTemp(base, "up")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		saved, err := Receive(context.Background(), dir, uploadContentTypes[int(kind)%len(uploadContentTypes)], bytes.NewReader(body), lim)
		if written := dirSize(t, dir); written > maxUpload {
			t.Fatalf("wrote %d bytes, over the %d the run may take", written, maxUpload)
		}
		if err == nil && saved == nil {
			t.Fatal("Receive accepted a run but returned none")
		}
		var ie *InputError
		if err != nil && !errors.As(err, &ie) {
			t.Fatalf("upload refused, not as the sender's fault: %v", err)
		}
	})
}
