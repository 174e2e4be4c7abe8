package fetch

import (
	"strings"
	"testing"
)

func TestIsLocalHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "api.localhost": true,
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "0.0.0.0": true,
		"example.com": false, "192.0.2.1": false, "203.0.113.7": false,
	} {
		if got := IsLocalHost(host); got != want {
			t.Errorf("IsLocalHost(%q) = %v, want %v", host, got, want)
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
