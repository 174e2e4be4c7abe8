package escape

import (
	"bytes"
	"context"
	"encoding/gob"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// copyModule copies the module testdata/name into a temporary directory,
// where a test may edit it.
func copyModule(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// counted returns options that keep the cache in dir and count compiles.
func counted(dir string, builds *int) Options {
	return Options{CacheDir: dir, compiling: func() { *builds++ }}
}

// entries lists the cache's entries.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"+cacheExt))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// buildClean builds pkgs of the module at mod and fails the test on any
// warning.
func buildClean(t *testing.T, mod string, pkgs []string, opts Options) *Index {
	t.Helper()
	ix, warns := Build(context.Background(), mod, pkgs, opts)
	for _, w := range warns {
		t.Fatalf("warning: %v", w)
	}
	if ix.Len() == 0 {
		t.Fatal("no diagnostics")
	}
	return ix
}

func TestBuildCache(t *testing.T) {
	mod := copyModule(t, "service")
	cache := t.TempDir()
	var builds int
	opts := counted(cache, &builds)
	check := func(what string, wantBuilds, wantEntries int) {
		t.Helper()
		if builds != wantBuilds {
			t.Errorf("%s: %d compiles so far, want %d", what, builds, wantBuilds)
		}
		if n := len(entries(t, cache)); n != wantEntries {
			t.Errorf("%s: %d cache entries, want %d", what, n, wantEntries)
		}
	}

	first := buildClean(t, mod, nil, opts)
	check("first build", 1, 1)
	second := buildClean(t, mod, nil, opts)
	check("same source again", 1, 1)
	if !reflect.DeepEqual(first.All(), second.All()) {
		t.Errorf("diagnostics read from the cache differ from the build's")
	}
	checkWants(t, second, wantsIn(t, filepath.Join(mod, "internal")))

	// A dependency's source decides its callers' diagnostics too (its
	// functions are inlined into them): editing only the package the
	// command imports builds again, and the answer is the new source's.
	store := filepath.Join(mod, "internal", "store", "store.go")
	edit(t, store, "kept = append(kept, v)\n\treturn kept", "return nil")
	third := buildClean(t, mod, nil, opts)
	check("dependency edited", 2, 2)
	if ds := third.At(store, 8); slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Kind == KindLeak }) {
		t.Errorf("store.go:8 still leaks after the edit: the cache answered for the old source")
	}
	buildClean(t, mod, nil, opts)
	check("edited source again", 2, 2)

	// What else decides the build: the module's go.mod, the build flags
	// and the go command's settings.
	edit(t, filepath.Join(mod, "go.mod"), "go 1.26", "go 1.25")
	buildClean(t, mod, nil, opts)
	check("go.mod edited", 3, 3)
	tagged := opts
	tagged.BuildFlags = []string{"-tags=perfscope_test"}
	buildClean(t, mod, nil, tagged)
	check("build tags", 4, 4)
	env := opts
	env.Env = []string{"GOFLAGS=-tags=perfscope_env"}
	buildClean(t, mod, nil, env)
	check("GOFLAGS", 5, 5)
	buildClean(t, mod, nil, opts)
	check("back to the go.mod edit", 5, 5)

	// A CPU profile beside the command guides its build (-pgo=auto).
	writePGO(t, filepath.Join(mod, "default.pgo"))
	buildClean(t, mod, nil, opts)
	check("default.pgo", 6, 6)
}

// writePGO writes a CPU profile at path in which main.leftPad is hot.
func writePGO(t *testing.T, path string) {
	t.Helper()
	fn := &profile.Function{ID: 1, Name: "main.leftPad", SystemName: "main.leftPad", Filename: "main.go"}
	loc := &profile.Location{ID: 1, Address: 0x10, Line: []profile.Line{{Function: fn, Line: 15}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
		Sample:     []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{100, 1_000_000_000}}},
		Location:   []*profile.Location{loc},
		Function:   []*profile.Function{fn},
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// edit replaces old with new in the file at path, padded with a comment
// to the same length, and gives the file back its modification time: only
// its content tells the change.
func edit(t *testing.T, path, old, new string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not hold %q", path, old)
	}
	if pad := len(old) - len(new) - len(" //"); pad >= 0 {
		new += " //" + strings.Repeat("x", pad)
	} else if len(new) != len(old) {
		t.Fatalf("%q cannot be padded to the length of %q", new, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
}

func TestBuildCacheCorruptEntry(t *testing.T) {
	mod := copyModule(t, "service")
	cache := t.TempDir()
	var builds int
	opts := counted(cache, &builds)
	want := buildClean(t, mod, nil, opts).All()
	names := entries(t, cache)
	if len(names) != 1 {
		t.Fatalf("%d cache entries, want 1", len(names))
	}
	entry := names[0]
	good, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	// Another key's entry, valid in itself, under this key's name.
	reason := bytes.Index(good, []byte("escapes to heap"))
	if reason < 0 {
		t.Fatal("no reason in the cache entry")
	}
	key := strings.TrimSuffix(filepath.Base(entry), cacheExt)
	other := resum(t, bytes.ReplaceAll(good, []byte(key), []byte(strings.Repeat("0", 64))))

	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"cut short", good[:len(good)/2]},
		{"header only", good[:len(cacheMagic)+64]},
		{"a letter of a reason changed", flip(good, reason+1)},
		{"not an entry", []byte("garbage\n{}")},
		{"another key's entry", other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(entry, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			before := builds
			got := buildClean(t, mod, nil, opts).All()
			if builds != before+1 {
				t.Errorf("the damaged entry was used: %d compiles, want %d", builds, before+1)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("diagnostics after the rebuild differ from the first build's")
			}
			buildClean(t, mod, nil, opts)
			if builds != before+1 {
				t.Errorf("the rebuilt entry was not kept: %d compiles, want %d", builds, before+1)
			}
		})
	}
}

// flip changes the case of the letter at i.
func flip(data []byte, i int) []byte {
	out := slices.Clone(data)
	out[i] ^= 0x20
	return out
}

// resum rewrites an entry's checksum to match its (edited) body, by
// writing it through put: the test checks the reader against the writer,
// not against its own idea of the format.
func resum(t *testing.T, entry []byte) []byte {
	t.Helper()
	_, body, ok := bytes.Cut(entry, []byte("\n"))
	if !ok {
		t.Fatal("entry without a header line")
	}
	var e cacheEntry
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&e); err != nil {
		t.Fatal(err)
	}
	c := &diagnosticsCache{dir: t.TempDir(), limit: cacheLimit}
	c.put(e.Key, e.Diagnostics)
	data, err := os.ReadFile(c.path(e.Key))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestBuildFailureNotCached(t *testing.T) {
	cache := t.TempDir()
	var builds int
	opts := counted(cache, &builds)
	for range 2 {
		if _, warns := Build(context.Background(), "testdata/broken", []string{"./..."}, opts); len(warns) == 0 {
			t.Fatal("no warning for a broken build")
		}
	}
	if builds != 2 || len(entries(t, cache)) != 0 {
		t.Errorf("a failed build was cached: %d compiles (want 2), %d entries (want 0)", builds, len(entries(t, cache)))
	}
}

func TestBuildCacheOff(t *testing.T) {
	var builds int
	opts := counted("off", &builds)
	for range 2 {
		buildClean(t, "testdata/service", nil, opts)
	}
	if builds != 2 {
		t.Errorf("%d compiles with the cache off, want 2", builds)
	}
}

func TestCacheTrim(t *testing.T) {
	dir := t.TempDir()
	c := &diagnosticsCache{dir: dir, limit: 1 << 20}
	diags := []Diagnostic{{Kind: KindEscape, Code: "escape", Pos: Position{File: "/src/x.go", Line: 1}, Message: strings.Repeat("x", 300<<10)}}
	old := time.Now().Add(-time.Hour)
	for i, key := range []string{"a", "b", "c"} {
		c.put(key, diags)
		// a was used first, then b, then c.
		ts := old.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(c.path(key), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := c.get("a"); !ok {
		t.Fatal("entry a missing before the cache is full")
	}
	// A write that never finished, long ago.
	stale := filepath.Join(dir, "z"+cacheExt+".123.tmp")
	if err := os.WriteFile(stale, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	c.put("d", diags) // the fourth entry passes the limit
	var kept []string
	filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			kept = append(kept, e.Name())
		}
		return nil
	})
	// b is the least recently used now that a was read.
	if want := []string{"a" + cacheExt, "c" + cacheExt, "d" + cacheExt}; !slices.Equal(kept, want) {
		t.Errorf("cache holds %v, want %v", kept, want)
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv(CacheEnv, filepath.FromSlash("/tmp/ps"))
	if got, want := DefaultCacheDir(), filepath.FromSlash("/tmp/ps/escape"); got != want {
		t.Errorf("DefaultCacheDir() = %q, want %q", got, want)
	}
	t.Setenv(CacheEnv, "off")
	if got := DefaultCacheDir(); got != "" {
		t.Errorf("DefaultCacheDir() with %s=off = %q, want none", CacheEnv, got)
	}
}
