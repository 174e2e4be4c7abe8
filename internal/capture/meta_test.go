package capture

import (
	"strings"
	"testing"
)

func TestRedactArgs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Authorization: Bearer abc", "Authorization: REDACTED"},
		{"--header=Cookie: session=1", "--header=Cookie: REDACTED"},
		{"X-Api-Key:k", "X-Api-Key: REDACTED"},
		{"X-Request-Source: perfscope", "X-Request-Source: perfscope"},
		{"http://user:pw@127.0.0.1:8080/", "http://user:xxxxx@127.0.0.1:8080/"},
		{"--pprof=http://u:pw@127.0.0.1:6060/debug/pprof/", "--pprof=http://u:xxxxx@127.0.0.1:6060/debug/pprof/"},
		{"http://127.0.0.1:8080/a:b", "http://127.0.0.1:8080/a:b"},
		{"http://127.0.0.1:8080/v1/leftpad/?str=test&len=24", "http://127.0.0.1:8080/v1/leftpad/?str=REDACTED&len=REDACTED"},
		{"--pprof=http://127.0.0.1:6060/debug/pprof/?token=t", "--pprof=http://127.0.0.1:6060/debug/pprof/?token=REDACTED"},
		{"Referer: https://example.com/?q=1", "Referer: https://example.com/?q=REDACTED"},
		{"-c", "-c"},
	} {
		if got := redactArgs([]string{tc.in})[0]; got != tc.want {
			t.Errorf("redact %q = %q, want %q", tc.in, got, tc.want)
		}
	}
	if redactArgs(nil) != nil {
		t.Error("redactArgs(nil) != nil")
	}
}

func TestIsLocalHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "api.localhost": true,
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "0.0.0.0": true,
		"example.com": false, "192.0.2.1": false, "203.0.113.7": false,
	} {
		if got := isLocalHost(host); got != want {
			t.Errorf("isLocalHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestHTMLAndFirstLine(t *testing.T) {
	for _, tc := range []struct {
		ct, body string
		want     bool
	}{
		{"text/html; charset=utf-8", "anything", true},
		{"", "  <!DOCTYPE html><html>", true},
		{"application/octet-stream", "<html><body>", true},
		{"text/plain", "Could not enable CPU profiling", false},
		{"application/octet-stream", "\x1f\x8b\x08", false},
	} {
		if got := isHTML(tc.ct, []byte(tc.body)); got != tc.want {
			t.Errorf("isHTML(%q, %q) = %v", tc.ct, tc.body, got)
		}
	}
	if got := firstLine([]byte("  first\x00 line\nsecond")); got != "first line" {
		t.Errorf("firstLine = %q", got)
	}
	if got := firstLine([]byte(strings.Repeat("é", 300))); !strings.HasSuffix(got, "...") || len([]rune(got)) != 203 {
		t.Errorf("long firstLine = %q", got)
	}
}
