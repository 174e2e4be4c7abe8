package run

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	rpprof "runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// saveTestRun saves a run without a load, for the run directory functions.
func saveTestRun(t *testing.T, root, id string, start time.Time) *Run {
	t.Helper()
	r := &Run{ID: id, Dir: filepath.Join(root, id), Target: "http://127.0.0.1:8080/", Start: start, Profiles: []ProfileFile{}}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.Save(); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLoadErrors(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, File), []byte("{not json"), 0o644)
	for _, tc := range []struct{ dir, want string }{
		{filepath.Join(root, "missing"), "no such directory"},
		{filepath.Join(root, "file"), "a file, not a run directory"},
		{root, "not a perfscope run directory (it has no run.json)"},
		{bad, "run.json is not a valid run description"},
	} {
		_, err := Load(tc.dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.dir) {
			t.Errorf("Load(%s) = %v; want an error naming the directory and saying %q", tc.dir, err, tc.want)
		}
	}
}

func TestList(t *testing.T) {
	root := t.TempDir()
	if runs, err := List(filepath.Join(root, "none")); err != nil || len(runs) != 0 {
		t.Errorf("List of a missing root = %v, %v; want no runs and no error", runs, err)
	}
	if _, err := Latest(root); err == nil || !strings.Contains(err.Error(), "no runs in "+root) {
		t.Errorf("Latest of an empty root: %v", err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	saveTestRun(t, root, "b", t0.Add(2*time.Minute))
	saveTestRun(t, root, "a", t0.Add(time.Minute))
	saveTestRun(t, root, "c", t0)
	os.MkdirAll(filepath.Join(root, "not-a-run"), 0o755)
	os.MkdirAll(filepath.Join(root, "broken"), 0o755)
	os.WriteFile(filepath.Join(root, "broken", File), []byte("]"), 0o644)

	runs, err := List(root)
	if err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("want the unreadable run reported, got %v", err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, ","); got != "c,a,b" {
		t.Errorf("runs = %s; want c,a,b (oldest first)", got)
	}
	latest, err := Latest(root)
	if err != nil || latest.ID != "b" || latest.Dir != filepath.Join(root, "b") {
		t.Errorf("Latest = %+v, %v; want run b", latest, err)
	}
}

func TestRunOpen(t *testing.T) {
	root := t.TempDir()
	r := saveTestRun(t, root, "r", time.Now())
	var buf bytes.Buffer
	if err := rpprof.Lookup("goroutine").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	name, err := r.SaveProfile(KindGoroutineStart, p)
	if err != nil {
		t.Fatal(err)
	}
	pf := ProfileFile{Kind: KindGoroutineStart, File: name, Samples: len(p.Sample)}
	r.Profiles = append(r.Profiles, pf, ProfileFile{Kind: KindCPU, Error: "fetch cpu profile from X: 404 Not Found"})

	if !r.Has(KindGoroutineStart) || r.Has(KindCPU) || r.Has(KindHeap) {
		t.Errorf("Has: goroutine_start %v, cpu %v, heap %v; want true, false, false",
			r.Has(KindGoroutineStart), r.Has(KindCPU), r.Has(KindHeap))
	}
	if got, err := r.Open(KindGoroutineStart); err != nil || len(got.Sample) != pf.Samples {
		t.Errorf("Open(goroutine_start) = %v; want the saved profile", err)
	}
	if _, err := r.Open(KindCPU); err == nil || !strings.Contains(err.Error(), "404 Not Found") {
		t.Errorf("Open(cpu) = %v; want the recorded error", err)
	}
	if _, err := r.Open(KindHeap); err == nil || !strings.Contains(err.Error(), "has no heap profile") {
		t.Errorf("Open(heap) = %v", err)
	}
	if r.Path(KindCPU) != "" || r.Path(KindGoroutineStart) != filepath.Join(r.Dir, "goroutine_start.pb.gz") {
		t.Errorf("Path: cpu %q, goroutine_start %q", r.Path(KindCPU), r.Path(KindGoroutineStart))
	}
}

func TestNewID(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("X", 3600))
	id := NewID(at)
	if !regexp.MustCompile(`^20260304-040607-[0-9a-f]{6}$`).MatchString(id) {
		t.Errorf("run ID %q; want the UTC time and a 6-hex-digit suffix", id)
	}
	if NewID(at) == id {
		t.Error("two runs in the same second got the same ID")
	}
}
