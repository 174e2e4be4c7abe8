package capture

import "testing"

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
