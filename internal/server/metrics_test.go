package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestMetricsReadAccess: /metrics reads as the pages do: open on loopback
// and on a server with --public-read, a token from elsewhere.
func TestMetricsReadAccess(t *testing.T) {
	ts := startServer(t, Config{NoCompiler: true})
	remote := []string{"X-Forwarded-For", "203.0.113.7"}
	for _, tc := range []struct {
		name, token string
		header      []string
		code        int
	}{
		{"loopback", "", nil, 200},
		{"remote without a token", "", remote, 401},
		{"remote with a wrong token", "pst_wrong", remote, 401},
		{"remote with a token", ts.Token, remote, 200},
		{"remote with the token as Basic password", "", append(remote, "Authorization", "Basic "+basicAuth("prometheus", ts.Token)), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := ts.do(t, http.MethodGet, "/metrics", tc.token, "", nil, tc.header...)
			if code != tc.code {
				t.Errorf("= %d %.300s; want %d", code, body, tc.code)
			}
			if code == http.StatusOK && !strings.Contains(string(body), "perfscope_start_time_seconds") {
				t.Errorf("no metrics in %s", body)
			}
		})
	}
	public := startServer(t, Config{NoCompiler: true, PublicRead: true})
	if code, body := public.do(t, http.MethodGet, "/metrics", "", "", nil, remote...); code != http.StatusOK {
		t.Errorf("remote read of a public server's metrics = %d %.300s", code, body)
	}
}
