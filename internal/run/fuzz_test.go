package run

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds run.json documents to Load: it must never panic, a
// loaded run must save and load back unchanged, and no profile path may
// leave the run directory.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"id":"20250101-120000-abcdef","target":"http://127.0.0.1:8080/","pprof_url":"http://127.0.0.1:6060/debug/pprof/",` +
		`"start":"2025-01-01T12:00:00Z","end":"2025-01-01T12:00:10Z","warmup_seconds":1,"profile_window_seconds":9,` +
		`"perfscope_version":"dev","load":{"requests":10,"successes":9,"failures":1,"errors":{"status_404":1},"status_codes":{"200":9,"404":1}},` +
		`"profiles":[{"kind":"cpu","file":"cpu.pb.gz","url":"u","samples":3,"seconds":9},{"kind":"heap","url":"u","error":"refused"}],` +
		`"interrupted":false,"notes":["n"]}`))
	f.Add([]byte(`{"id":"x","profiles":[{"kind":"cpu","file":"../../etc/passwd"}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, File), data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Load(dir)
		if err != nil {
			if r != nil {
				t.Fatalf("Load returned a run and an error: %v", err)
			}
			return
		}
		for _, pf := range r.Profiles {
			if p := r.Path(pf.Kind); p != "" && filepath.Dir(p) != filepath.Clean(dir) {
				t.Fatalf("profile %q: path %s leaves the run directory %s", pf.Kind, p, dir)
			}
		}
		_ = r.Seconds()
		first, err := json.Marshal(r)
		if err != nil {
			// Load accepted it, so it holds nothing JSON cannot encode.
			t.Fatalf("encode a loaded run: %v", err)
		}
		if err := r.Save(); err != nil {
			t.Fatal(err)
		}
		back, err := Load(dir)
		if err != nil {
			t.Fatalf("load a run just saved: %v\n%s", err, first)
		}
		second, _ := json.Marshal(back)
		if !bytes.Equal(first, second) && !strings.Contains(string(first), "\\ufffd") {
			t.Fatalf("run changed on a save and load:\n%s\n%s", first, second)
		}
	})
}
