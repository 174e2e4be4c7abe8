package runupload

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/testenv"
)

// maxHostileGrowth bounds how much one hostile upload may grow the test
// process, the race detector's shadow memory included: the bounded
// reader holds at most the inflated limit (64 MiB) of a profile it
// refuses. Measured: 65–72 MiB with -race.
const maxHostileGrowth = 160 << 20

// realCPU is the real profile hostile ones are shaped after.
const realCPU = realRun + "/cpu.pb.gz"

// TestHostileUploads receives each hostile upload a server met: it is
// refused as over a limit or malformed, in one line, no more than the
// limit reaches the disk, and the process grows by less than
// maxHostileGrowth.
func TestHostileUploads(t *testing.T) {
	// A tar whose entry declares 4 GiB: refused at its header.
	var declared bytes.Buffer
	zw := gzip.NewWriter(&declared)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "cpu.pb.gz", Typeflag: tar.TypeReg, Mode: 0o644, Size: 4 << 30})
	tw.Write(make([]byte, 1<<20))
	tw.Flush()
	zw.Close()
	// A tar of more entries than a run has files.
	var entries bytes.Buffer
	zw = gzip.NewWriter(&entries)
	tw = tar.NewWriter(zw)
	for i := range 1000 {
		tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%d/", i), Typeflag: tar.TypeDir, Mode: 0o755})
	}
	tw.Close()
	zw.Close()
	runJSON := testenv.RunJSON(t, "hostile", "cpu")
	mpBomb, mpBody := testenv.Multipart(t, "run.json", runJSON, "cpu.pb.gz", testenv.ZeroBomb(1024))
	mpLarge, mpLargeBody := testenv.Multipart(t, "run.json", runJSON, "cpu.pb.gz", testenv.RealShaped(t, realCPU, 213))
	mpJSON, mpJSONBody := testenv.Multipart(t, "run.json", append(append([]byte(`{"id":"hostile","x":"`), bytes.Repeat([]byte("x"), 52<<20)...), `"}`...))
	for _, tc := range []struct {
		name, contentType string
		body              []byte
		cap               bool
		want              string
	}{
		{"tar.gz with an 8 GiB profile bomb", "application/gzip", testenv.TarGz("run.json", runJSON, "cpu.pb.gz", testenv.ZeroBomb(8<<10)), true, "inflated size is over the limit"},
		{"multipart with a 1 GiB profile bomb", mpBomb, mpBody, true, "inflated size is over the limit"},
		{"a real-shaped profile of 213 MiB", mpLarge, mpLargeBody, true, "profile too large"},
		{"tar.gz entry declaring 4 GiB", "application/gzip", declared.Bytes(), true, "more than the server's limit"},
		{"tar.gz of 1000 directories", "application/gzip", entries.Bytes(), false, "more than 64 entries"},
		{"run.json of 52 MiB", mpJSON, mpJSONBody, true, "run.json is larger than 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Logf("upload of %d bytes", len(tc.body))
			dir := t.TempDir()
			mem := testenv.WatchMemory()
			_, err := Receive(t.Context(), dir, tc.contentType, bytes.NewReader(tc.body), Limits{MaxBytes: maxUpload})
			grew := mem.Stop()
			t.Logf("refused: %v; the process grew by %d MiB", err, grew>>20)
			var ie *InputError
			if !errors.As(err, &ie) || ie.Cap != tc.cap || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Receive = %v, want an input error (cap %v) saying %q in one line", err, tc.cap, tc.want)
			}
			if grew > maxHostileGrowth {
				t.Errorf("the process grew by %d MiB, over %d MiB", grew>>20, maxHostileGrowth>>20)
			}
			if written := dirSize(t, dir); written > maxUpload {
				t.Errorf("wrote %d bytes, over the %d the run may take", written, maxUpload)
			}
		})
	}
}

// TestRunMemoryLimit: profiles each within their limits that together
// would take more memory than one analysis may are refused.
func TestRunMemoryLimit(t *testing.T) {
	files := realRunFiles(t, "")
	ct, body := testenv.Multipart(t, files...)
	_, err := Receive(t.Context(), t.TempDir(), ct, bytes.NewReader(body), Limits{MaxBytes: maxUpload, Profiles: lowMemory})
	var ie *InputError
	if !errors.As(err, &ie) || !ie.Cap || !strings.Contains(err.Error(), "memory together") {
		t.Errorf("Receive = %v, want a refusal of the profiles' memory together", err)
	}
}

// lowMemory lets each of the real run's profiles be parsed (the largest
// takes about 0.9 MiB) but not all of them together (about 1.6 MiB).
var lowMemory = fetch.Limits{MaxMemory: 1 << 20}

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
