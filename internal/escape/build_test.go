package escape

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// These tests run the real compiler on the small modules under testdata.
// Their source marks what the compiler must report with comments like
//
//	s = string(c) + s // want: escape "escapes to heap"
//
// meaning: At(file, line) holds a diagnostic of kind escape whose Reason
// contains the quoted text.

var wantRE = regexp.MustCompile(`// want: ([a-z-]+) (".*")$`)

type want struct {
	file   string
	line   int
	kind   Kind
	reason string
}

func wantsIn(t *testing.T, dir string) []want {
	t.Helper()
	var ws []want
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			m := wantRE.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			reason, err := strconv.Unquote(m[2])
			if err != nil {
				t.Fatalf("%s:%d: bad want comment: %v", path, n, err)
			}
			abs, _ := filepath.Abs(path)
			ws = append(ws, want{abs, n, Kind(m[1]), reason})
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) == 0 {
		t.Fatalf("no want comments under %s", dir)
	}
	return ws
}

func checkWants(t *testing.T, ix *Index, ws []want) {
	t.Helper()
	for _, w := range ws {
		ds := ix.At(w.file, w.line)
		ok := slices.ContainsFunc(ds, func(d Diagnostic) bool {
			return d.Kind == w.kind && strings.Contains(d.Reason, w.reason)
		})
		if !ok {
			var got []string
			for _, d := range ds {
				got = append(got, string(d.Kind)+": "+d.Reason)
			}
			t.Errorf("%s:%d: want %s %q; got:\n\t%s", filepath.Base(w.file), w.line, w.kind, w.reason, strings.Join(got, "\n\t"))
		}
	}
}

func TestBuildService(t *testing.T) {
	ctx := context.Background()
	ix, warns := Build(ctx, "testdata/service", []string{"./..."}, Options{})
	for _, w := range warns {
		t.Errorf("warning: %v", w)
	}
	checkWants(t, ix, wantsIn(t, "testdata/service"))

	// Generic code instantiated from the standard library is attributed to
	// the instantiating package; it must not show up as the user's code.
	for _, f := range ix.Files() {
		if !strings.Contains(f, filepath.Join("testdata", "service")) {
			t.Errorf("file outside the module indexed: %s", f)
		}
	}
	// The bare record the compiler logs beside each explained escape is
	// dropped, so the allocation at line 15 is reported once where it is
	// written and once where leftPad is inlined into main (line 50).
	main, _ := filepath.Abs("testdata/service/main.go")
	ds := ix.At(main, 15)
	if len(ds) != 2 || len(ds[0].Inlined) != 0 || ds[1].Pos.Line != 50 || ds[1].Site().Line != 15 {
		t.Errorf("main.go:15: got %d diagnostics, want the escape and its inlined copy at line 50:", len(ds))
		for _, d := range ds {
			t.Logf("\t%s %s inlined=%v", d.Pos, d.Reason, d.Inlined)
		}
	}
}

func TestBuildOnlyNamedCommand(t *testing.T) {
	// Naming one command still covers the module's packages it imports,
	// and a second build, with perfscope's cache off, compiles again: a
	// build the go command took from its own cache would log nothing.
	for range 2 {
		ix, warns := Build(context.Background(), "testdata/service", nil, Options{CacheDir: "off"})
		if len(warns) > 0 {
			t.Fatalf("warnings: %v", warns)
		}
		store, _ := filepath.Abs("testdata/service/internal/store/store.go")
		if len(ix.At(store, 8)) == 0 {
			t.Errorf("no diagnostics for the imported package internal/store")
		}
		tool, _ := filepath.Abs("testdata/service/cmd/tool/main.go")
		if len(ix.At(tool, 11)) != 0 {
			t.Errorf("diagnostics for cmd/tool, which was not named")
		}
	}
}

func TestBuildFailureIsOneLineWarning(t *testing.T) {
	ix, warns := Build(context.Background(), "testdata/broken", []string{"./..."}, Options{})
	if len(warns) != 1 {
		t.Fatalf("got %d warnings, want 1: %v", len(warns), warns)
	}
	msg := warns[0].Error()
	const want = "compiler diagnostics unavailable: build of . failed: ./main.go:4:2: undefined: undefinedFn"
	if msg != want {
		t.Errorf("warning:\n got %q\nwant %q", msg, want)
	}
	// The package that did compile is still reported.
	checkWants(t, ix, wantsIn(t, "testdata/broken/ok"))
}

func TestBuildMissingPackage(t *testing.T) {
	ix, warns := Build(context.Background(), "testdata/service", []string{"./nope"}, Options{})
	if len(warns) != 1 || strings.Contains(warns[0].Error(), "\n") || !strings.Contains(warns[0].Error(), "compiler diagnostics unavailable") {
		t.Errorf("warnings = %v, want one line", warns)
	}
	if ix.Len() != 0 {
		t.Errorf("index has %d diagnostics, want 0", ix.Len())
	}
}

func TestBuildCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, warns := Build(ctx, "testdata/service", nil, Options{})
	if len(warns) == 0 {
		t.Fatal("no warning for a canceled build")
	}
}

func TestFindModuleCommands(t *testing.T) {
	ctx := context.Background()
	commands := func(dir string, opts Options) (string, []string, error) {
		m, err := FindModule(ctx, dir, opts)
		if err != nil {
			return "", nil, err
		}
		pkgs, err := m.Commands(ctx)
		return m.Root, pkgs, err
	}
	root, pkgs, err := commands("testdata/service/internal/store", Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantRoot, _ := filepath.Abs("testdata/service")
	if root != wantRoot {
		t.Errorf("root = %s, want %s", root, wantRoot)
	}
	if want := []string{"example.com/service", "example.com/service/cmd/tool"}; !slices.Equal(pkgs, want) {
		t.Errorf("packages = %v, want %v", pkgs, want)
	}

	if _, _, err := commands("testdata/libonly", Options{}); err == nil || !strings.Contains(err.Error(), "no main package") {
		t.Errorf("module without a command: err = %v", err)
	}
	if _, _, err := commands(t.TempDir(), Options{Env: []string{"GOWORK=off"}}); err == nil || !strings.Contains(err.Error(), "not inside a Go module") {
		t.Errorf("directory outside a module: err = %v", err)
	}
}

func TestQuoteFlag(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"-json=0,/tmp/x", "-json=0,/tmp/x"},
		{"-json=0,/tmp/a b", "'-json=0,/tmp/a b'"},
		{"-json=0,/tmp/it's here", `"-json=0,/tmp/it's here"`},
	} {
		got, err := quoteFlag(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("quoteFlag(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := quoteFlag(`-json=0,/tmp/'"`); err == nil {
		t.Error("quoteFlag accepted both quote characters")
	}
}
