package report

import (
	"strings"
	"testing"
)

func TestTextTable(t *testing.T) {
	cases := []struct {
		name  string
		table func() *TextTable
		want  string
	}{
		{
			name: "alignment and notes",
			table: func() *TextTable {
				tt := &TextTable{Columns: []TextColumn{{Heading: "name"}, {Heading: "n", Align: Right}, {}}}
				tt.AddRow("a", "1", tt.Note("few samples"))
				tt.AddRow("bbbb", "100", tt.Note("few samples", "noisy"))
				return tt
			},
			want: "" +
				"name    n\n" +
				"a       1  ¹\n" +
				"bbbb  100  ¹ ²\n" +
				"¹ few samples\n" +
				"² noisy\n",
		},
		{
			name: "empty columns take no space; lines span the table",
			table: func() *TextTable {
				tt := &TextTable{Indent: "  ", Columns: []TextColumn{{Heading: "x"}, {}, {Heading: "y", Align: Right}}}
				tt.AddLine("pkg: a much longer line than any column")
				tt.AddRow("1", "", "22")
				return tt
			},
			want: "" +
				"  x   y\n" +
				"  pkg: a much longer line than any column\n" +
				"  1  22\n",
		},
		{
			name: "group headings widen the columns they span",
			table: func() *TextTable {
				tt := &TextTable{Columns: []TextColumn{{}, {Align: Right}, {Align: Right}}}
				tt.Groups = [][]Span{{{Text: "a long group", Start: 1, Len: 2}}}
				tt.AddRow("r", "1", "2")
				return tt
			},
			want: "" +
				"   a long group\n" +
				"r      1      2\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := tc.table().WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

func TestSuperscript(t *testing.T) {
	for n, want := range map[int]string{1: "¹", 10: "¹⁰", 123: "¹²³"} {
		if got := Superscript(n); got != want {
			t.Errorf("Superscript(%d) = %q, want %q", n, got, want)
		}
	}
}
