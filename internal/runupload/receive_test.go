package runupload

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/testenv"
)

// realRun is a run 'perfscope profile' saved, with its seven profiles.
const realRun = "../findings/testdata/runs/leftpad-naive"

// realRunFiles returns the name/data pairs of the real run's run.json and
// profiles, prefixed.
func realRunFiles(t *testing.T, prefix string) []any {
	t.Helper()
	saved, err := run.Load(realRun)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{run.File}
	for _, pf := range saved.Profiles {
		if pf.File != "" {
			names = append(names, pf.File)
		}
	}
	var files []any
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(realRun, n))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, prefix+n, data)
	}
	return files
}

const maxUpload = 64 << 20 // the server's default

// TestReceiveRealRun receives a real run as each body type the server
// takes, and moves it into place.
func TestReceiveRealRun(t *testing.T) {
	mpType, mpBody := testenv.Multipart(t, realRunFiles(t, "")...)
	for _, tc := range []struct {
		name, contentType string
		body              []byte
	}{
		{"multipart", mpType, mpBody},
		{"tar.gz from inside", "application/gzip", testenv.TarGz(realRunFiles(t, "./")...)},
		{"tar.gz from above", "application/x-gzip", testenv.TarGz(realRunFiles(t, "leftpad-naive/")...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			if err := ResetIncoming(data); err != nil {
				t.Fatal(err)
			}
			tmp, err := NewIncoming(data)
			if err != nil {
				t.Fatal(err)
			}
			saved, err := Receive(t.Context(), tmp, tc.contentType, bytes.NewReader(tc.body), Limits{MaxBytes: maxUpload})
			if err != nil {
				t.Fatal(err)
			}
			if saved.ID != "leftpad-naive" || len(saved.Profiles) != 7 {
				t.Fatalf("received run %q with %d profiles", saved.ID, len(saved.Profiles))
			}
			final, err := Move(tmp, data, saved.ID)
			if err != nil {
				t.Fatal(err)
			}
			moved, err := run.Load(final)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := moved.Open(run.KindCPU); err != nil {
				t.Errorf("the moved run's CPU profile: %v", err)
			}
			if entries, _ := os.ReadDir(filepath.Join(data, IncomingDir)); len(entries) != 0 {
				t.Errorf("%d uploads left in %s", len(entries), IncomingDir)
			}
		})
	}
}

// TestReceiveRefusals: what is not a whole run directory is refused as the
// sender's fault, with one line saying what was wrong.
func TestReceiveRefusals(t *testing.T) {
	files := realRunFiles(t, "")
	runJSON, allocs := files[1].([]byte), files[3].([]byte)
	mp := func(files ...any) (string, []byte) { return testenv.Multipart(t, files...) }
	tgz := func(files ...any) (string, []byte) { return "application/gzip", testenv.TarGz(files...) }
	withProfiles := func(files ...any) []any { return append(files, realRunFiles(t, "")[2:]...) }
	var cases = []struct {
		name string
		ct   string
		body []byte
		cap  bool
		want string
	}{}
	add := func(name string, ct string, body []byte, overCap bool, want string) {
		cases = append(cases, struct {
			name string
			ct   string
			body []byte
			cap  bool
			want string
		}{name, ct, body, overCap, want})
	}
	ct, b := mp("allocs.pb.gz", allocs)
	add("no run.json", ct, b, false, "no run.json")
	ct, b = mp("run.json", runJSON, "allocs.pb.gz", allocs)
	add("a listed profile missing", ct, b, false, "but the upload has no such file")
	ct, b = mp(withProfiles("run.json", runJSON, "stray.pb.gz", allocs)...)
	add("an unlisted file", ct, b, false, "not listed in run.json")
	ct, b = mp("evil.sh", runJSON)
	add("a file that is no profile", ct, b, false, "run.json and the")
	ct, b = mp("run.json", runJSON, "run.json", runJSON)
	add("a file twice", ct, b, false, "in the upload twice")
	ct, b = mp("run.json", []byte("{"))
	add("a corrupt run.json", ct, b, false, "not a valid run description")
	ct, b = mp("run.json", testenv.RunJSON(t, "../up", "cpu"))
	add("a run id that is a path", ct, b, false, "run.json: run id")
	ct, b = mp("run.json", testenv.RunJSON(t, "r", "cpu"), "cpu.pb.gz", []byte("<html>not a profile</html>"))
	add("a corrupt profile", ct, b, false, "cpu.pb.gz is not a pprof profile")
	ct, b = tgz("a/b/run.json", runJSON)
	add("a tar.gz nested too deep", ct, b, false, "nested too deep")
	add("a body cut short", "application/gzip", testenv.TarGz("run.json", runJSON)[:40], false, "read tar.gz body")
	add("another body type", "text/plain", []byte("x"), false, "Content-Type")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Receive(t.Context(), t.TempDir(), tc.ct, bytes.NewReader(tc.body), Limits{MaxBytes: maxUpload})
			var ie *InputError
			if !errors.As(err, &ie) || ie.Cap != tc.cap || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Receive = %v, want an input error (cap %v) saying %q in one line", err, tc.cap, tc.want)
			}
		})
	}
}

// TestReceiveReadError: a body reader's own error is found in the
// refusal, so that a server can tell its body limit from a bad upload.
func TestReceiveReadError(t *testing.T) {
	limit := errors.New("body over the limit")
	whole := testenv.TarGz(realRunFiles(t, "")...)
	body := io.MultiReader(bytes.NewReader(whole[:len(whole)/2]), iotest.ErrReader(limit))
	_, err := Receive(context.Background(), t.TempDir(), "application/gzip", body, Limits{MaxBytes: maxUpload})
	var ie *InputError
	if !errors.Is(err, limit) || !errors.As(err, &ie) {
		t.Errorf("Receive = %v, want an input error wrapping the reader's", err)
	}
}

func TestCheckID(t *testing.T) {
	for id, ok := range map[string]bool{"20261124-070053-4f1a2c": true, "run.one_2": true, "": false, "..": false, ".hidden": false, "a/b": false, strings.Repeat("x", 129): false} {
		if err := CheckID(id); (err == nil) != ok {
			t.Errorf("CheckID(%q) = %v", id, err)
		}
	}
}
