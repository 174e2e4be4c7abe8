package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/escape"
)

func escapeListing(profiled bool) *escape.Listing {
	pad := escape.Diagnostic{Kind: escape.KindEscape, Code: "escape", Pos: escape.Position{File: "/src/svc/main.go", Line: 15, Col: 9},
		Reason: "`string(c) + s` escapes to heap: stored in `s`"}
	logged := escape.Diagnostic{Kind: escape.KindEscape, Code: "escape", Pos: escape.Position{File: "/src/svc/main.go", Line: 42, Col: 10},
		Inlined: []escape.Position{{File: "/src/svc/log/log.go", Line: 7}}, Reason: "`&v` escapes to heap: passed as interface argument to fmt.Sprintf"}
	l := &escape.Listing{
		Root: "/src/svc", Group: escape.GroupEscape, Warnings: []error{errors.New("compiler diagnostics unavailable: build of ./broken failed")},
		Source: map[escape.Position]string{{File: "/src/svc/main.go", Line: 15}: "s = string(c) + s", {File: "/src/svc/main.go", Line: 42}: "l.Debug(v)"},
	}
	if !profiled {
		l.Diagnostics = []escape.Diagnostic{pad, logged}
		return l
	}
	l.Profiled, l.SampleType, l.Unit, l.Total = true, "alloc_space", "bytes", 4<<20
	l.Hot = []escape.HotLine{
		{WeightedLine: escape.WeightedLine{File: "/ci/svc/main.go", Line: 15, Value: 3 << 20}, Source: "/src/svc/main.go", Diagnostics: []escape.Diagnostic{pad}},
	}
	return l
}

func TestWriteEscapeText(t *testing.T) {
	for _, tc := range []struct {
		profiled bool
		want     []string
	}{
		{false, []string{
			"main.go:15  s = string(c) + s\n    escape         `string(c) + s` escapes to heap: stored in `s`\n",
			"main.go:42  l.Debug(v)\n",
			"(inlined from log/log.go:7)",
		}},
		{true, []string{
			"hot lines by alloc_space with compiler diagnostics of kind escape:\n",
			" 1. main.go:15  3 MiB (75.0%)  s = string(c) + s\n    escape ",
		}},
	} {
		var b bytes.Buffer
		if err := WriteEscape(&b, Text, escapeListing(tc.profiled)); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("profiled %v: text lacks %q:\n%s", tc.profiled, w, b.String())
			}
		}
	}
	var b bytes.Buffer
	WriteEscape(&b, Text, &escape.Listing{Group: escape.GroupBounds})
	if b.String() != "no compiler diagnostics of kind bounds\n" {
		t.Errorf("empty listing = %q", b.String())
	}
}

func TestWriteEscapeJSON(t *testing.T) {
	for _, tc := range []struct {
		profiled bool
		keys     []string
	}{
		{false, []string{"diagnostics", "warnings"}},
		{true, []string{"sample_type", "unit", "total", "hot_lines", "warnings"}},
	} {
		var b bytes.Buffer
		if err := WriteEscape(&b, JSON, escapeListing(tc.profiled)); err != nil {
			t.Fatal(err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.keys) {
			t.Errorf("profiled %v: keys %v, want %v", tc.profiled, got, tc.keys)
		}
		for _, k := range tc.keys {
			if _, ok := got[k]; !ok {
				t.Errorf("profiled %v: no %q in %s", tc.profiled, k, b.String())
			}
		}
		if !tc.profiled && !strings.Contains(b.String(), "`&v` escapes") {
			t.Errorf("reasons are HTML-escaped: %s", b.String())
		}
	}
	var b bytes.Buffer
	WriteEscape(&b, JSON, &escape.Listing{})
	if !strings.Contains(b.String(), `"diagnostics": []`) || !strings.Contains(b.String(), `"warnings": []`) {
		t.Errorf("empty listing = %s; want empty arrays", b.String())
	}
}
