package escape

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// testProfile is an allocation profile: leftPad (inlined into main) and
// runtime.mallocgc called from logValue.
func testProfile() *profile.Profile {
	fn := func(id uint64, name, file string) *profile.Function {
		return &profile.Function{ID: id, Name: name, SystemName: name, Filename: file}
	}
	mainFn := fn(1, "main.main", "/ci/svc/main.go")
	padFn := fn(2, "main.leftPad", "/ci/svc/main.go")
	logFn := fn(3, "main.logValue", "/ci/svc/main.go")
	mallocFn := fn(4, "runtime.mallocgc", "/usr/local/go/src/runtime/malloc.go")
	// One location holds leftPad inlined into main: innermost first.
	padInMain := &profile.Location{ID: 1, Address: 0x10, Line: []profile.Line{{Function: padFn, Line: 15}, {Function: mainFn, Line: 50}}}
	logLoc := &profile.Location{ID: 2, Address: 0x20, Line: []profile.Line{{Function: logFn, Line: 21}}}
	mallocLoc := &profile.Location{ID: 3, Address: 0x30, Line: []profile.Line{{Function: mallocFn, Line: 1000}}}
	mainLoc := &profile.Location{ID: 4, Address: 0x40, Line: []profile.Line{{Function: mainFn, Line: 51}}}
	return &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "alloc_space",
		Sample: []*profile.Sample{
			{Location: []*profile.Location{padInMain}, Value: []int64{1, 100, 0, 0}},
			{Location: []*profile.Location{padInMain}, Value: []int64{1, 50, 0, 0}},
			{Location: []*profile.Location{mallocLoc, logLoc, mainLoc}, Value: []int64{2, 70, 0, 0}},
		},
		Location: []*profile.Location{padInMain, logLoc, mallocLoc, mainLoc},
		Function: []*profile.Function{mainFn, padFn, logFn, mallocFn},
	}
}

func TestProfileLines(t *testing.T) {
	p := testProfile()
	// Round-trip through the file format, as a saved profile is read.
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	user := func(f string) bool { return strings.HasPrefix(f, "/ci/svc/") }
	got := ProfileLines(p, user)
	want := []WeightedLine{
		{File: "/ci/svc/main.go", Line: 15, Value: 150}, // innermost inlined frame
		{File: "/ci/svc/main.go", Line: 21, Value: 70},  // malloc's bytes count for the caller
	}
	if len(got) != len(want) {
		t.Fatalf("ProfileLines = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if typ, unit := SampleUnit(p); typ != "alloc_space" || unit != "bytes" {
		t.Errorf("SampleUnit = %s %s, want alloc_space bytes", typ, unit)
	}

	// Without a scope the leaf frame gets the value.
	leaf := ProfileLines(p, nil)
	if len(leaf) != 2 || leaf[1].File != "/usr/local/go/src/runtime/malloc.go" {
		t.Errorf("ProfileLines(nil scope) = %+v, want the runtime leaf", leaf)
	}

	// Joined with diagnostics from a local checkout.
	ix := NewIndex([]Diagnostic{diag("/home/me/svc/main.go", 15, KindEscape)})
	hot := ix.Join(ProfileLines(p, ix.Compiled))
	if len(hot) != 2 || hot[0].Line != 15 || len(hot[0].Diagnostics) != 1 {
		t.Errorf("Join = %+v, want main.go:15 first with its escape", hot)
	}
}

func TestProfileLinesEmpty(t *testing.T) {
	if got := ProfileLines(&profile.Profile{}, nil); got != nil {
		t.Errorf("ProfileLines of an empty profile = %v, want nil", got)
	}
}
