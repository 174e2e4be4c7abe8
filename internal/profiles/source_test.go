package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/run"
)

// sourceFunc returns the listing of function in v.
func sourceFunc(t *testing.T, v *SourceView, function string) FunctionSource {
	t.Helper()
	var got []string
	for _, f := range v.Functions {
		if f.Function == function {
			return f
		}
		got = append(got, f.Function)
	}
	t.Fatalf("%s not listed in the %s view; listed: %v", function, v.SampleType, got)
	return FunctionSource{}
}

func sourceLine(t *testing.T, f FunctionSource, line int64) SourceLine {
	t.Helper()
	for _, ln := range f.Lines {
		if ln.Line == line {
			return ln
		}
	}
	t.Fatalf("%s: line %d not in the listing", f.Function, line)
	return SourceLine{}
}

func TestSourceCPU(t *testing.T) {
	v, errs := Source(load(t, "cpu"), SampleCPU, nil, SourceOptions{Top: 10})
	if len(errs) > 0 {
		t.Fatalf("warnings: %v", errs)
	}
	if v.Unit != "nanoseconds" || v.Total <= 0 {
		t.Fatalf("unit %q total %d", v.Unit, v.Total)
	}
	f := sourceFunc(t, v, "main.burnCPU")
	if f.Source == "" || f.Note != "" {
		t.Fatalf("burnCPU: source %q note %q", f.Source, f.Note)
	}
	if f.EndLine <= f.StartLine {
		t.Errorf("span %d-%d", f.StartLine, f.EndLine)
	}
	// Listed whole: every line of the function, in order, with its text.
	if int64(len(f.Lines)) != f.EndLine-f.StartLine+1 {
		t.Errorf("%d lines listed for span %d-%d", len(f.Lines), f.StartLine, f.EndLine)
	}
	burn := sourceLine(t, f, siteLine(t, "burn"))
	if !strings.Contains(burn.Text, "x ^= x << 13") {
		t.Errorf("burn line text %q", burn.Text)
	}
	var sum int64
	for _, ln := range f.Lines {
		sum += ln.Self
		if ln.Self > ln.Cum || ln.Flat > ln.Cum {
			t.Errorf("line %d: flat %d self %d cum %d", ln.Line, ln.Flat, ln.Self, ln.Cum)
		}
	}
	if sum != f.Self || f.Self <= 0 || f.SelfShare <= 0 || f.SelfShare > 1 {
		t.Errorf("self: lines sum to %d, function %d (%.3f)", sum, f.Self, f.SelfShare)
	}
	// Functions are ranked by self.
	for i := 1; i < len(v.Functions); i++ {
		if v.Functions[i].Self > v.Functions[i-1].Self {
			t.Errorf("not ranked by self: %s %d after %s %d", v.Functions[i].Function, v.Functions[i].Self,
				v.Functions[i-1].Function, v.Functions[i-1].Self)
		}
	}
}

// TestSourceAllocsSelf checks that allocating lines carry their bytes as
// Self.
func TestSourceAllocsSelf(t *testing.T) {
	v, errs := Source(load(t, "allocs"), SampleAllocSpace, nil, SourceOptions{})
	if len(errs) > 0 {
		t.Fatalf("warnings: %v", errs)
	}
	f := sourceFunc(t, v, "main.makeBuffers")
	ln := sourceLine(t, f, siteLine(t, "buffers"))
	if ln.Self <= 0 || !strings.Contains(ln.Text, "make([]byte") {
		t.Errorf("buffers line: %+v", ln)
	}
	c := sourceFunc(t, v, "main.concatLoop")
	if ln := sourceLine(t, c, siteLine(t, "concat")); ln.Self <= 0 {
		t.Errorf("concat line: %+v", ln)
	}
}

func TestSourceDirMapping(t *testing.T) {
	checkout := t.TempDir()
	dst := filepath.Join(checkout, "testdata", "workload", "main.go")
	copyFile(t, filepath.Join("testdata", "workload", "main.go"), dst)
	v, errs := Source(load(t, "cpu"), SampleCPU, nil, SourceOptions{SourceDir: checkout, Top: 10})
	if len(errs) > 0 {
		t.Fatalf("warnings: %v", errs)
	}
	if f := sourceFunc(t, v, "main.fib"); f.Source != dst {
		t.Errorf("main.fib read from %q, want %q", f.Source, dst)
	}
}

// TestSourceMismatch gives a checkout that is another program: the
// listing falls back to the profile's lines and says why.
func TestSourceMismatch(t *testing.T) {
	checkout := t.TempDir()
	other := "package main\n\nfunc main() {}\n\nfunc burnCPU() {}\n"
	if err := os.MkdirAll(filepath.Join(checkout, "workload"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "workload", "main.go"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	v, errs := Source(load(t, "cpu"), SampleCPU, nil, SourceOptions{SourceDir: checkout, Top: 10})
	if len(errs) == 0 || !strings.Contains(errs[0].Error(), "does not match") {
		t.Errorf("want a mismatch warning, got %v", errs)
	}
	f := sourceFunc(t, v, "main.burnCPU")
	if f.Source != "" || !strings.Contains(f.Note, "does not match") {
		t.Errorf("source %q note %q", f.Source, f.Note)
	}
	for _, ln := range f.Lines {
		if ln.Text != "" || (ln.Flat == 0 && ln.Cum == 0 && ln.Self == 0) {
			t.Errorf("profile-only listing has line %+v", ln)
		}
	}
}

func TestSourceNotFound(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	v, errs := Source(load(t, "cpu"), SampleCPU, nil, SourceOptions{Resolve: none, Top: 10})
	if len(errs) > 0 {
		t.Fatalf("a missing source is a note, not a warning: %v", errs)
	}
	f := sourceFunc(t, v, "main.burnCPU")
	if !strings.Contains(f.Note, "--source-dir") || len(f.Lines) == 0 {
		t.Errorf("note %q, %d lines", f.Note, len(f.Lines))
	}
	sourceLine(t, f, siteLine(t, "burn"))
}

func TestSourceListings(t *testing.T) {
	a := &Analysis{Profiles: map[string]*profile.Profile{
		run.KindCPU:    load(t, "cpu"),
		run.KindAllocs: load(t, "allocs"),
		run.KindMutex:  load(t, "mutex"),
	}}
	a.Classifier = NewClassifier("", a.Profiles[run.KindCPU])
	views, errs := SourceListings(a, SourceOptions{})
	if len(errs) > 0 {
		t.Fatalf("warnings: %v", errs)
	}
	var got []string
	for _, v := range views {
		got = append(got, v.Kind+"/"+v.SampleType)
	}
	want := "cpu/cpu allocs/alloc_objects allocs/alloc_space mutex/delay"
	if strings.Join(got, " ") != want {
		t.Errorf("views %v, want %s", got, want)
	}
}

func TestFuncName(t *testing.T) {
	for _, tt := range []struct {
		symbol  string
		name    string
		closure bool
	}{
		{"main.main", "main", false},
		{"main.(*service).handle", "handle", false},
		{"main.service.handle", "handle", false},
		{"example.com/m/pkg.F[...]", "F", false},
		{"example.com/m/pkg.(*T[...]).M", "M", false},
		{"main.run.func1", "run", true},
		{"main.run.func1.2", "run", true},
		{"main.serve.gowrap1", "serve", true},
		{"main.init.0", "init", false},
		{"main.init.0.func1", "init", true},
	} {
		name, closure := funcName(tt.symbol)
		if name != tt.name || closure != tt.closure {
			t.Errorf("funcName(%q) = %q, %v; want %q, %v", tt.symbol, name, closure, tt.name, tt.closure)
		}
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSourceImplicitInit: a package's initialization of its variables
// ("p.init"), which no source declares, is said as such, not taken for a
// source that does not match.
func TestSourceImplicitInit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.go")
	src := "package p\n\nvar table = build()\n\nfunc build() []int { return make([]int, 1<<20) }\n\nfunc init() {}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	fn := func(id uint64, name string, line int64) *profile.Function {
		return &profile.Function{ID: id, Name: name, SystemName: name, Filename: path, StartLine: line}
	}
	implicit, declared, method := fn(1, "example.com/p.init", 1), fn(2, "example.com/p.init.0", 7), fn(3, "example.com/p.(*T).init", 9)
	var locs []*profile.Location
	var samples []*profile.Sample
	for i, f := range []*profile.Function{implicit, declared, method} {
		l := &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f, Line: f.StartLine}}}
		locs = append(locs, l)
		samples = append(samples, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{1, int64(10 * (i + 1))}})
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample:     samples, Location: locs, Function: []*profile.Function{implicit, declared, method},
	}
	v, errs := Source(p, SampleCPU, nil, SourceOptions{Resolve: func(string) (string, bool) { return path, true }, Top: 10})
	// The method the file does not hold is a mismatch still.
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "(*T).init") {
		t.Errorf("want one warning, of the method the file lacks: %v", errs)
	}
	if f := sourceFunc(t, v, "example.com/p.init"); f.Source != "" || !strings.Contains(f.Note, "initialization of its variables") {
		t.Errorf("the package's initialization: source %q, note %q", f.Source, f.Note)
	}
	if f := sourceFunc(t, v, "example.com/p.init.0"); f.Source != path || f.StartLine != 7 {
		t.Errorf("the declared func init: source %q from line %d, note %q", f.Source, f.StartLine, f.Note)
	}
}
