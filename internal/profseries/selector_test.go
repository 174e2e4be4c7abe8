package profseries

import (
	"strings"
	"testing"
)

func TestSelector(t *testing.T) {
	api := NewLabels(map[string]string{"service": "api", "version": "1.4", "env": "prod", "team name": "pay – ops", "zone-id": "eu west 1"})
	dev := NewLabels(map[string]string{"service": "api", "version": "2.0", "env": "dev"})
	for _, tc := range []struct {
		sel      string
		api, dev bool
	}{
		{``, true, true},
		{`{}`, true, true},
		{`{service="api"}`, true, true},
		{`{service="api",version=~"1\\..*",env!="dev"}`, true, false},
		{` { service = "api" , env !~ "de.*" , } `, true, false},
		{`service="api", version="2.0"`, false, true},
		{`{version=~"1"}`, false, false}, // anchored: "1" is not "1.4"
		{`{missing=""}`, true, true},     // a label a series lacks is ""
		{`{missing!=""}`, false, false},
		{`{"team name"="pay – ops"}`, true, false},
		{`{zone-id="eu west 1"}`, true, false},
		{"{zone-id=`eu west 1`}", true, false},
		{`{env=~"prod|dev",service!="web"}`, true, true},
	} {
		s, err := ParseSelector(tc.sel)
		if err != nil {
			t.Errorf("ParseSelector(%s): %v", tc.sel, err)
			continue
		}
		if got := s.Matches(api); got != tc.api {
			t.Errorf("%s matches %s = %v", tc.sel, api, got)
		}
		if got := s.Matches(dev); got != tc.dev {
			t.Errorf("%s matches %s = %v", tc.sel, dev, got)
		}
		again, err := ParseSelector(s.String())
		if err != nil || again.String() != s.String() {
			t.Errorf("%s written as %s reads back as %v, %v", tc.sel, s, again, err)
		}
	}
	for _, tc := range []struct{ sel, want string }{
		{`{service=api}`, `at offset 9: want a quoted value ("...") for label "service", found 'a'`},
		{`{service="api"`, `at offset 14: want '}' to close the selector, found the end`},
		{`{service="api}`, `at offset 9: unterminated quoted string`},
		{`{service:"api"}`, `at offset 8: want an operator (=, !=, =~ or !~) after label "service", found ':'`},
		{`{="api"}`, `at offset 1: want a label name, found '='`},
		{`{a="1" b="2"}`, `at offset 7: want ',' between matchers or '}' at the end, found 'b'`},
		{`{a=~"("}`, `at offset 4: label "a": bad regular expression`},
		{`{a="\q"}`, `bad escape in quoted string`},
		{`{a="1"} x`, `at offset 8: unexpected 'x' after the selector`},
	} {
		_, err := ParseSelector(tc.sel)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSelector(%s) = %v; want one line containing %q", tc.sel, err, tc.want)
		}
	}
}

// FuzzSelector: any input parses or is one error line; what parses is
// written back as a selector that reads the same.
func FuzzSelector(f *testing.F) {
	for _, s := range []string{``, `{}`, `{service="api",version=~"1\\..*",env!="dev"}`, `{"a b"!~"x y"}`, "{a=`raw`}", `{a="é – ü"}`, `{a="\"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSelector(text)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		again, err := ParseSelector(s.String())
		if err != nil {
			t.Fatalf("%q parsed, written as %q, does not read back: %v", text, s, err)
		}
		if again.String() != s.String() {
			t.Fatalf("%q written as %q reads back as %q", text, s, again)
		}
	})
}
