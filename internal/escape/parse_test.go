package escape

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/logs holds logs recorded from the Go 1.26 compiler for the
// programs beside them (demo.go.txt, two.go.txt).

func parseFixture(t *testing.T, name string) []Diagnostic {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "logs", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ds, err := ParseLog(f)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestParseLogRecorded(t *testing.T) {
	ix := NewIndex(append(parseFixture(t, "demo.json"), parseFixture(t, "two.json")...))
	const demo, two = "/home/dev/demo/main.go", "/home/dev/two/a.go"
	for _, tc := range []struct {
		file   string
		line   int
		kind   Kind
		code   string
		reason string
	}{
		{demo, 12, KindEscape, "escape", "`string(c) + s` escapes to heap: stored in `s`, then returned from the function"},
		{demo, 18, KindEscape, "escape", "`v` escapes to heap: passed as interface argument to fmt.Sprintf, which retains it"},
		{demo, 27, KindLeak, "leak", "parameter `p` leaks to heap: stored in `sink`"},
		{demo, 32, KindMovedToHeap, "escape", "`p` is moved to heap: its address is returned from the function"},
		{demo, 36, KindCanInline, "canInlineFunction", "can be inlined (cost 4)"},
		{demo, 39, KindBounds, "isInBounds", "bounds check on an index expression"},
		{demo, 54, KindCannotInline, "cannotInlineFunction", "cannot be inlined: function too complex"},
		{two, 6, KindMovedToHeap, "escapes", "`x` is moved to heap: its address is stored in `global`"},
		{two, 12, KindBounds, "isSliceInBounds", "bounds check on a slice expression"},
		{two, 16, KindMovedToHeap, "escapes", "`a` is moved to heap: too large for the stack"},
		{two, 21, KindMovedToHeap, "escape", "`c` is moved to heap: captured by a closure"},
		{two, 25, KindLeak, "leak", "parameter `ch` leaks to {storage for func literal}: captured by a closure"},
		{two, 32, KindCopy, "copy", "large copy: 256 bytes"},
		{two, 44, KindLoopVar, "iteration-variable-to-heap", "loop variable `i` is heap-allocated on every iteration"},
		{two, 44, KindLoopVar, "loop-modified-for", "loop modified for"},
		{two, 56, KindCannotInlineCall, "cannotInlineCall", "call not inlined"},
		{two, 59, KindCannotInlineCall, "cannotInlineCall", "call not inlined: repeated recursive cycle to example.com/two.rec"},
	} {
		found := false
		for _, d := range ix.At(tc.file, tc.line) {
			if d.Kind == tc.kind && d.Code == tc.code && strings.HasPrefix(d.Reason, tc.reason) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s:%d: no %s (%s) %q; got:", filepath.Base(tc.file), tc.line, tc.kind, tc.code, tc.reason)
			for _, d := range ix.At(tc.file, tc.line) {
				t.Logf("\t%s %s: %s", d.Kind, d.Code, d.Reason)
			}
		}
	}
}

func TestParseLogFlowAndInlining(t *testing.T) {
	ix := NewIndex(parseFixture(t, "demo.json"))
	// Debug3 is inlined into handle (line 51); the escape flow ends in
	// fmt.Fprintln inside Debug3's body at line 46.
	var d *Diagnostic
	for _, x := range ix.At("/home/dev/demo/main.go", 51) {
		if x.Message == "smallIndex escapes to heap" {
			d = &x
		}
	}
	if d == nil {
		t.Fatal("no escape of smallIndex at line 51")
	}
	if len(d.Flow) != 3 {
		t.Fatalf("flow has %d steps, want 3: %+v", len(d.Flow), d.Flow)
	}
	last := d.Flow[2]
	if last.Dst != "{heap}" || last.Src != "*args" {
		t.Errorf("last step %s ← %s, want {heap} ← *args", last.Dst, last.Src)
	}
	call := last.Via[len(last.Via)-1]
	if call.Why != "call parameter" || call.Expr != "fmt.Fprintln(os.Stderr, args...)" || len(call.Inlined) != 1 || call.Inlined[0].Line != 46 {
		t.Errorf("last note = %+v, want the inlined call to fmt.Fprintln at line 46", call)
	}
	// Without the source at hand the call is named from the flow alone.
	if want := "`smallIndex` escapes to heap: passed as interface argument to a variadic call, then passed to fmt.Fprintln (main.go:46), which retains it"; d.Reason != want {
		t.Errorf("reason:\n got %s\nwant %s", d.Reason, want)
	}

	// Inlined code is found where it was written, too.
	var inlined int
	for _, x := range ix.At("/home/dev/demo/main.go", 12) {
		if len(x.Inlined) > 0 {
			inlined++
			if x.Pos.Line != 55 {
				t.Errorf("inlined copy reported at line %d, want 55 (the call site)", x.Pos.Line)
			}
		}
	}
	if inlined == 0 {
		t.Error("leftPad's allocation inlined into main not found at line 12")
	}
}

func TestParseLogMalformed(t *testing.T) {
	const header = `{"version":0,"package":"p","goos":"linux","goarch":"amd64","gc_version":"go1.26","file":"/x/a.go"}` + "\n"
	const rng = `"range":{"start":{"line":3,"character":2},"end":{"line":3,"character":2}}`
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "empty compiler log"},
		{"not json", "hello", "compiler log header"},
		{"header without version", `{"file":"/x/a.go"}`, "no version"},
		{"future version", `{"version":1,"file":"/x/a.go"}`, "version 1"},
		{"header without file", `{"version":0}`, "no file"},
		{"record without range", header + `{"code":"escape"}`, "record 2: no range"},
		{"record without code", header + `{` + rng + `}`, "record 2: no code"},
		{"truncated record", header + `{` + rng + `,"code":"esc`, "record 2"},
		{"negative line", header + `{"range":{"start":{"line":-1}},"code":"x"}`, "record 2"},
		{"wrong type", header + `{` + rng + `,"code":3}`, "record 2"},
		{"note before flow", header + `{` + rng + `,"code":"escape","relatedInformation":[{"message":"escflow:      from x (spill)"}]}`, "before any flow"},
		{"bad flow", header + `{` + rng + `,"code":"escape","relatedInformation":[{"message":"escflow:    flow: nothing"}]}`, "want \"flow: DST"},
		{"unknown flow entry", header + `{` + rng + `,"code":"escape","relatedInformation":[{"message":"escflow: ???"}]}`, "unknown form"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := ParseLog(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error; got %v", ds)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestParseLogTolerates(t *testing.T) {
	const in = `{"version":0,"package":"p","file":"/x/a.go","extra":1}
{"range":{"start":{"line":3,"character":2},"end":{"line":3,"character":2}},"code":"somethingNew","message":"m","relatedInformation":[{"message":"futureKind"}],"more":true}
`
	ds, err := ParseLog(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Kind != KindOther || ds[0].Reason != "somethingNew: m" {
		t.Errorf("got %+v, want one diagnostic of kind other", ds)
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join("testdata", "logs", "demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "main"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main", "main.json"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main", "bad.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, errs := ReadDir(dir)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "bad.json") {
		t.Errorf("errors = %v, want one naming bad.json", errs)
	}
	if len(ds) == 0 {
		t.Error("good log not read")
	}
}

func TestURIPath(t *testing.T) {
	for in, want := range map[string]string{
		"file:///usr/local/go/src/fmt/print.go": "/usr/local/go/src/fmt/print.go",
		"file://example.com/m/x.go":             "example.com/m/x.go", // -trimpath
		"file://fmt/print.go":                   "fmt/print.go",
		"file:///tmp/a%20b/x.go":                "/tmp/a b/x.go",
		"/plain/path.go":                        "/plain/path.go",
	} {
		if got := uriPath(in); got != want {
			t.Errorf("uriPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseLog(f *testing.F) {
	for _, name := range []string{"demo.json", "two.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "logs", name))
		if err != nil {
			f.Fatal(err)
		}
		// Seeds are a log's first records, not the whole log: the fuzzer
		// minimizes every input that finds new code, one run per byte it
		// tries to remove, and a 40 KB seed keeps it minimizing for
		// minutes instead of fuzzing.
		lines := bytes.SplitAfter(b, []byte("\n"))
		f.Add(bytes.Join(lines[:min(4, len(lines))], nil))
		// A prefix cut mid-record, as from a crashed compiler.
		f.Add(bytes.Join(lines[:min(3, len(lines))], nil)[:len(lines[0])+len(lines[1])/2])
	}
	f.Add([]byte(`{"version":0,"file":"a.go"}` + "\n" + `{"range":{"start":{"line":1}},"code":"escape","message":" escapes to heap","relatedInformation":[{"message":"escflow: flow: ←:"},{"message":"escflow: from  ()"},{"message":"inlineLoc"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := ParseLog(strings.NewReader(string(data)))
		if err != nil {
			return
		}
		ix := NewIndex(ds)
		for _, d := range ds {
			if d.Kind == "" || d.Reason == "" {
				t.Errorf("diagnostic without kind or reason: %+v", d)
			}
			ix.At(d.Pos.File, d.Pos.Line)
		}
	})
}
