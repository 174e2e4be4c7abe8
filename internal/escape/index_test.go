package escape

import (
	"slices"
	"testing"
)

func diag(file string, line int, kind Kind) Diagnostic {
	return Diagnostic{Kind: kind, Code: string(kind), Pos: Position{File: file, Line: line, Col: 1}, Reason: string(kind)}
}

func TestResolve(t *testing.T) {
	ix := NewIndex([]Diagnostic{
		diag("/src/svc/cmd/api/main.go", 1, KindEscape),
		diag("/src/svc/cmd/worker/main.go", 1, KindEscape),
		diag("/src/svc/internal/h/handler.go", 1, KindEscape),
	})
	for _, tc := range []struct {
		in, want string
	}{
		{"/src/svc/internal/h/handler.go", "/src/svc/internal/h/handler.go"},
		// Built elsewhere (CI), or with -trimpath.
		{"/build/ws/svc/internal/h/handler.go", "/src/svc/internal/h/handler.go"},
		{"example.com/svc/internal/h/handler.go", "/src/svc/internal/h/handler.go"},
		{`C:\build\svc\cmd\api\main.go`, "/src/svc/cmd/api/main.go"},
		{"/other/cmd/worker/main.go", "/src/svc/cmd/worker/main.go"},
		// Two main.go files match equally well: no answer beats a wrong one.
		{"/elsewhere/main.go", ""},
		{"main.go", ""},
		{"/src/svc/internal/h/other.go", ""},
		{"", ""},
	} {
		got, ok := ix.Resolve(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

func TestAtAndByKind(t *testing.T) {
	inlined := diag("/m/main.go", 50, KindEscape)
	inlined.Inlined = []Position{{File: "/m/pad.go", Line: 7, Col: 3}}
	ix := NewIndex([]Diagnostic{
		diag("/m/pad.go", 7, KindEscape),
		diag("/m/pad.go", 7, KindBounds),
		diag("/m/pad.go", 3, KindCanInline),
		inlined,
	})
	got := ix.At("/m/pad.go", 7)
	if len(got) != 3 || got[2].Pos.File != "/m/main.go" {
		t.Errorf("At(pad.go, 7) = %v, want two own diagnostics then the inlined copy", got)
	}
	if n := len(ix.At("/m/main.go", 50)); n != 1 {
		t.Errorf("At(main.go, 50) has %d diagnostics, want 1", n)
	}
	if n := len(ix.ByKind(KindEscape, KindMovedToHeap)); n != 2 {
		t.Errorf("ByKind(escape) = %d, want 2", n)
	}
	if n := len(ix.ByKind(GroupInline.Kinds()...)); n != 1 {
		t.Errorf("ByKind(inline group) = %d, want 1", n)
	}
	if n := len(ix.ByKind()); n != 4 {
		t.Errorf("ByKind() = %d, want all 4", n)
	}
	inlinedStd := diag("/m/main.go", 60, KindEscape)
	inlinedStd.Inlined = []Position{{File: "/go/src/bytes/reader.go", Line: 159}}
	ix = NewIndex(append(ix.All(), inlinedStd))
	if !ix.Compiled("/ci/m/main.go") || ix.Compiled("/go/src/bytes/reader.go") || ix.Compiled("/m/nope.go") {
		t.Error("Compiled: want true only for files the compiler reported at")
	}
	if n := len(ix.At("/go/src/bytes/reader.go", 159)); n != 1 {
		t.Errorf("At(reader.go, 159) has %d diagnostics, want the inlined copy", n)
	}
	if want := []string{"/go/src/bytes/reader.go", "/m/main.go", "/m/pad.go"}; !slices.Equal(ix.Files(), want) {
		t.Errorf("Files() = %v, want %v", ix.Files(), want)
	}
}

func TestGroups(t *testing.T) {
	for _, g := range Groups() {
		for _, k := range g.Kinds() {
			if k.Group() != g {
				t.Errorf("kind %s listed in group %s but belongs to %s", k, g, k.Group())
			}
		}
	}
	if GroupAll.Kinds() != nil {
		t.Error("GroupAll.Kinds() must be nil (every kind)")
	}
}

func TestJoin(t *testing.T) {
	ix := NewIndex([]Diagnostic{
		diag("/src/svc/pad.go", 12, KindEscape),
		diag("/src/svc/log.go", 20, KindEscape),
	})
	hot := ix.Join([]WeightedLine{
		{File: "/ci/svc/log.go", Line: 20, Value: 30},
		{File: "/ci/svc/pad.go", Line: 12, Value: 50},
		{File: "/src/svc/pad.go", Line: 12, Value: 25}, // same line, local path
		{File: "/usr/local/go/src/runtime/malloc.go", Line: 1000, Value: 90},
	})
	if len(hot) != 3 {
		t.Fatalf("got %d hot lines, want 3: %+v", len(hot), hot)
	}
	if hot[0].Value != 90 || hot[0].Source != "" || len(hot[0].Diagnostics) != 0 {
		t.Errorf("hot[0] = %+v, want the runtime line without source or diagnostics", hot[0])
	}
	if hot[1].Value != 75 || hot[1].Source != "/src/svc/pad.go" || len(hot[1].Diagnostics) != 1 {
		t.Errorf("hot[1] = %+v, want pad.go:12 merged to 75 with its escape", hot[1])
	}
	if hot[2].Value != 30 || len(hot[2].Diagnostics) != 1 {
		t.Errorf("hot[2] = %+v, want log.go:20 with its escape", hot[2])
	}
}
