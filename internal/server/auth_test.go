package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestWriteAccess: a write needs the token as a Bearer header, never as a
// Basic password a browser may have cached, and no web page of another
// origin may write, whatever its body's type; clients that are not
// browsers keep writing. Reads still take the Basic password.
func TestWriteAccess(t *testing.T) {
	ts := startServer(t, Config{NoCompiler: true})
	host := strings.TrimPrefix(ts.URL, "http://")
	basic := "Basic " + basicAuth("anyone", ts.Token)
	bench := func() *strings.Reader { return strings.NewReader(benchFixture(3, 1)) }
	form := "application/x-www-form-urlencoded"

	for _, tc := range []struct {
		name, token, contentType string
		header                   []string
		code                     int
		want                     string
	}{
		{"Basic password", "", "text/plain", []string{"Authorization", basic}, 401, "a Basic-auth password is taken for reads only"},
		{"no token", "", "text/plain", nil, 401, "writing needs a token"},
		{"cross-site form", ts.Token, form, []string{"Sec-Fetch-Site", "cross-site", "Origin", "http://evil.example"}, 403, "may not write here"},
		{"cross-site text", ts.Token, "text/plain", []string{"Sec-Fetch-Site", "cross-site"}, 403, "may not write here"},
		{"same-site page", ts.Token, "text/plain", []string{"Sec-Fetch-Site", "same-site"}, 403, "may not write here"},
		{"other origin, old browser", ts.Token, "text/plain", []string{"Origin", "http://evil.example"}, 403, "may not write here"},
		{"cross-site with a cached password", "", form, []string{"Authorization", basic, "Sec-Fetch-Site", "cross-site"}, 403, "may not write here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := ts.do(t, http.MethodPost, "/api/v1/bench?commit=abcd1234", tc.token, tc.contentType, bench(), tc.header...)
			checkOneLineError(t, code, body, tc.code, tc.want)
			checkNothingStored(t, ts)
		})
	}
	ct, body := multipartRun(t, makeRunDir(t, "cross"))
	code, resp := ts.do(t, http.MethodPost, "/api/v1/runs", ts.Token, ct, body, "Sec-Fetch-Site", "cross-site")
	checkOneLineError(t, code, resp, 403, "may not write here")

	// Writes a browser may make from the dashboard's own origin, and those
	// of clients that are not browsers.
	for i, header := range [][]string{
		nil,
		{"Sec-Fetch-Site", "same-origin", "Origin", ts.URL},
		{"Origin", "http://" + host},
	} {
		commit := "abcd123" + string(rune('0'+i))
		if code, body := ts.do(t, http.MethodPost, "/api/v1/bench?commit="+commit, ts.Token, "text/plain", bench(), header...); code != http.StatusCreated {
			t.Errorf("write with %q = %d %s", header, code, body)
		}
	}
	remote := []string{"X-Forwarded-For", "203.0.113.7", "Authorization", basic}
	if code, body := ts.do(t, http.MethodGet, "/api/v1/commits", "", "", nil, remote...); code != http.StatusOK {
		t.Errorf("remote read with the token as Basic password = %d %s", code, body)
	}
}
