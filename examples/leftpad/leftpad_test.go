package leftpad

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

var modes = []mode{naive, optimized}

func TestLeftpad(t *testing.T) {
	for _, tt := range []struct {
		s      string
		length int
		chr    rune
		want   string
	}{
		{"test", 10, '*', "******test"},
		{"test", 4, '*', "test"},
		{"test", 2, '*', "test"},
		{"test", 0, ' ', "test"},
		{"", 3, '0', "000"},
		{"héllo", 7, 'é', "ééhéllo"},
		{"x", 4, '🙂', "🙂🙂🙂x"},
	} {
		for _, m := range modes {
			if got := leftpad(tt.s, tt.length, tt.chr, m); got != tt.want {
				t.Errorf("%v: leftpad(%q, %d, %q) = %q, want %q", m, tt.s, tt.length, tt.chr, got, tt.want)
			}
		}
	}
}

func TestParseParams(t *testing.T) {
	for _, tt := range []struct {
		str, length, chr string
		wantChr          rune
		wantLen          int
		problem          string // substring; empty for valid
	}{
		{"a", "5", "", ' ', 5, ""},
		{"a", "5", "*", '*', 5, ""},
		{"a", "1024", "é", 'é', 1024, ""},
		{"a", "0", "", ' ', 0, ""},
		{"a", "", "", 0, 0, "missing len"},
		{"a", "x", "", 0, 0, "invalid len"},
		{"a", "-1", "", 0, 0, "invalid len"},
		{"a", "1025", "", 0, 0, "invalid len"},
		{"a", "99999999999999999999", "", 0, 0, "invalid len"},
		{"a", "5", "ab", 0, 0, "invalid chr"},
		{"a", "5", "\xff", 0, 0, "invalid chr"},
	} {
		_, chr, length, problem := parseParams(tt.str, tt.length, tt.chr)
		if tt.problem == "" {
			if problem != "" || chr != tt.wantChr || length != tt.wantLen {
				t.Errorf("parseParams(%q, %q, %q) = %q, %d, %q; want %q, %d, no problem", tt.str, tt.length, tt.chr, chr, length, problem, tt.wantChr, tt.wantLen)
			}
			continue
		}
		if !strings.Contains(problem, tt.problem) {
			t.Errorf("parseParams(%q, %q, %q) problem %q, want it to contain %q", tt.str, tt.length, tt.chr, problem, tt.problem)
		}
	}
}

// TestAppendJSONString checks the hand-written encoder against
// encoding/json, which naive mode uses, byte for byte.
func TestAppendJSONString(t *testing.T) {
	cases := []string{"", "plain", `"quoted" \back\`, "<a href='x'>&amp;</a>", "\x00\x01\b\f\n\r\t\x1f\x7f",
		"é🙂", "\u2028\u2029", "bad \xff utf8 \xc3", "\xed\xa0\x80"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(3) == 0 {
				b[i] = byte(rng.IntN(128))
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		checkJSONString(t, s)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("<x>\u2028\xff")
	f.Fuzz(checkJSONString)
}

func checkJSONString(t *testing.T, s string) {
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendJSONString(nil, s); string(got) != string(want) {
		t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
	}
}

func TestLeftpadLengthInRunes(t *testing.T) {
	got := leftpad("ab", 50, 'ü', optimized)
	if n := utf8.RuneCountInString(got); n != 50 {
		t.Errorf("leftpad to 50 runes gave %d runes", n)
	}
}
