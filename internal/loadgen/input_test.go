package loadgen

import (
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:8080/x": "",
		"https://example.com":     "",
		"http://h/a b":            "",
		"127.0.0.1:8080/x":        "no scheme: did you mean 'http://127.0.0.1:8080/x'?",
		"localhost":               "no scheme: did you mean 'http://localhost'?",
		"htp:/bad url":            `URL "htp:/bad url" does not start with http:// or https://: write it like 'http://127.0.0.1:8080/path'`,
		"http:/x":                 "does not start with http:// or https://",
		"":                        "does not start with http:// or https://",
		"ftp://h/x":               "only http:// and https:// are supported, not ftp://",
		"http:///x":               "no host",
		"http://h:port/":          `invalid port ":port"`,
	} {
		err := CheckURL(raw)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURL(%q) = %v, want %q", raw, err, want)
		}
		if err != nil && (want != "" && !strings.Contains(err.Error(), "http://") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("CheckURL(%q) = %q: want one line showing a URL to write", raw, err)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	h, err := ParseHeaders([]string{"x-token: a b ", "Accept:json"})
	if err != nil || h.Get("X-Token") != "a b" || h.Get("Accept") != "json" {
		t.Fatalf("%v %v", h, err)
	}
	for _, bad := range []string{"novalue", ": x", "a b: c", "x: a\nb"} {
		if _, err := ParseHeaders([]string{bad}); err == nil {
			t.Errorf("ParseHeaders(%q) accepted", bad)
		}
	}
}

func TestCheckMethod(t *testing.T) {
	if m, err := CheckMethod("post"); m != "POST" || err != nil {
		t.Errorf("post: %q %v", m, err)
	}
	for _, bad := range []string{"", "GE T", "a/b"} {
		if _, err := CheckMethod(bad); err == nil {
			t.Errorf("CheckMethod(%q) accepted", bad)
		}
	}
}
