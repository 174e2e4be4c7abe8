package report

import "testing"

func TestUnits(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{value(0, "nanoseconds"), "0s"},
		{value(850, "nanoseconds"), "850ns"},
		{value(12_345, "nanoseconds"), "12.3µs"},
		{value(270_000_000, "nanoseconds"), "270ms"},
		{value(1_770_000_000, "nanoseconds"), "1.77s"},
		{value(-20_000_000, "nanoseconds"), "-20ms"},
		{value(900, "bytes"), "900 B"},
		{value(2048, "bytes"), "2 KiB"},
		{value(314_572_800, "bytes"), "300 MiB"},
		{value(9999, "count"), "9999"},
		{value(307_000, "count"), "307k"},
		{value(2_100_000, "count"), "2.1M"},
		{count(9.25), "9.25"},
		{thousands(250000), "250,000"},
		{thousands(-1234), "-1,234"},
		{thousands(12), "12"},
		{percent(0.1234), "12.3%"},
		{percent(0), "0.0%"},
		{percent(0.0005), "0.05%"},
		{percent(0.00004), "<0.01%"},
		{rate(22727.3), "22,727 req/s"},
		{rate(12.34), "12.3 req/s"},
		{millis(0.31), "310µs"},
		{millis(1.9), "1.9ms"},
		{millis(1500), "1.5s"},
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
