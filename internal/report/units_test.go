package report

import (
	"testing"
)

func TestLocations(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{shortPath("/home/u/pad/internal/x/pad.go"), "x/pad.go"},
		{shortPath("pad.go"), "pad.go"},
		{location("/a/b/c.go", 12), "b/c.go:12"},
		{location("", 12), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"main.(*T).M": `main.(\*T).M`,
		"a_b <x> [y]": `a\_b &lt;x&gt; \[y\]`,
		"plain text":  "plain text",
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"main.(*T).M": "`main.(*T).M`",
		"a|b":         "`a\\|b`",
		"x`y":         "``x`y``",
	} {
		if got := mdCode(in); got != want {
			t.Errorf("mdCode(%q) = %q, want %q", in, got, want)
		}
	}
}
