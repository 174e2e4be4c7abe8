package pprofweb

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// realProfile reads a CPU profile 'perfscope profile' saved of the
// left-pad service.
func realProfile(t *testing.T, name string) *profile.Profile {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "findings", "testdata", "runs", name, "cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// get serves path of ui under /p.
func get(t *testing.T, ui *UI, view, query string) (*httptest.ResponseRecorder, bool) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/p/"+view+query, nil)
	w := httptest.NewRecorder()
	return w, ui.Serve(w, r, "/p", view)
}

func TestServeViews(t *testing.T) {
	naive, optimized := realProfile(t, "leftpad-naive"), realProfile(t, "leftpad-optimized")
	u := New(Config{})
	ui, err := u.Get(Key{Head: "naive", Kind: "cpu"}, func() (*profile.Profile, *profile.Profile, error) { return naive, nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	w, ok := get(t, ui, "top", "")
	if !ok || w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "leftpad") {
		t.Errorf("top view = %v %d, without the service's functions", ok, w.Code)
	}
	if w, ok := get(t, ui, "flamegraph", ""); !ok || w.Code != http.StatusOK {
		t.Errorf("flame graph = %v %d", ok, w.Code)
	}
	r := httptest.NewRequest(http.MethodGet, "/p", nil)
	rec := httptest.NewRecorder()
	if !ui.Serve(rec, r, "/p", "") || rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/p/" {
		t.Errorf("root without a slash = %d to %q, want a redirect to /p/", rec.Code, rec.Header().Get("Location"))
	}
	for _, view := range []string{"saveconfig", "deleteconfig", "disasm", "nosuchview"} {
		if _, ok := get(t, ui, view, ""); ok {
			t.Errorf("view %s is served", view)
		}
	}
	diff, err := u.Get(Key{Base: "naive", Head: "optimized", Kind: "cpu"}, func() (*profile.Profile, *profile.Profile, error) { return optimized, naive, nil })
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := get(t, diff, "top", ""); !ok || w.Code != http.StatusOK {
		t.Errorf("top of the difference = %v %d", ok, w.Code)
	}
}

// TestCache: a UI is built once, the least recently used goes beyond
// Max, a failure is tried again, and a run's UIs go with it.
func TestCache(t *testing.T) {
	p := realProfile(t, "leftpad-naive")
	u := New(Config{Max: 2})
	builds := map[Key]int{}
	get := func(k Key) error {
		_, err := u.Get(k, func() (*profile.Profile, *profile.Profile, error) { builds[k]++; return p, nil, nil })
		return err
	}
	a, b, c := Key{Head: "a", Kind: "cpu"}, Key{Head: "b", Kind: "cpu"}, Key{Base: "a", Head: "c", Kind: "cpu"}
	for _, k := range []Key{a, a, b, a, c, a, b} {
		if err := get(k); err != nil {
			t.Fatal(err)
		}
	}
	// a b a: built a, b; c evicts b; a kept; b built again, evicting c.
	if builds[a] != 1 || builds[b] != 2 || builds[c] != 1 {
		t.Errorf("builds = %v, want a once, b twice, c once", builds)
	}
	u.ForgetRun("a")
	if get(a); builds[a] != 2 {
		t.Errorf("after ForgetRun(a), a's UI was not built again")
	}

	fail := errors.New("profile gone")
	k := Key{Head: "flaky", Kind: "cpu"}
	if _, err := u.Get(k, func() (*profile.Profile, *profile.Profile, error) { return nil, nil, fail }); !errors.Is(err, fail) {
		t.Fatalf("Get = %v, want the load's error", err)
	}
	if _, err := u.Get(k, func() (*profile.Profile, *profile.Profile, error) { return p, nil, nil }); err != nil {
		t.Errorf("a failure was kept: %v", err)
	}
}

// TestConfine: only files inside the source directory keep a name,
// whatever path the profile gives; the profile passed in is unchanged.
func TestConfine(t *testing.T) {
	top := t.TempDir()
	src := filepath.Join(top, "checkout")
	if err := os.MkdirAll(filepath.Join(src, "svc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "svc", "handler.go"), []byte("package svc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(top, "secret.go")
	p := &profile.Profile{Function: []*profile.Function{
		{ID: 1, Name: "svc.Work", Filename: "/build/ci/svc/handler.go"},
		{ID: 2, Name: "main.Secret", Filename: secret},
		{ID: 3, Name: "main.Climb", Filename: "svc/../../secret.go"},
	}}
	got := confine(p, src)
	want := []string{filepath.Join(src, "svc", "handler.go"), "", ""}
	for i, fn := range got.Function {
		if fn.Filename != want[i] {
			t.Errorf("%s: file %q, want %q", fn.Name, fn.Filename, want[i])
		}
	}
	if p.Function[1].Filename != secret {
		t.Error("confine changed the profile it was given")
	}
	for _, fn := range confine(p, "").Function {
		if fn.Filename != "" {
			t.Errorf("without a source directory, %s keeps file %q", fn.Name, fn.Filename)
		}
	}
}
