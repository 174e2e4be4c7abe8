package leftpad

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/expose"
)

// testService is a service of one mode behind a real HTTP server on
// loopback, with a real StatsD socket and log file.
type testService struct {
	srv     *httptest.Server
	statsd  net.PacketConn
	logPath string
	log     *accessLog
}

func newTestService(t testing.TB, m mode) *testService {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	stats, err := newStatsd(pc.LocalAddr().String(), "leftpad", m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stats.Close() })
	logPath := filepath.Join(t.TempDir(), "access.log")
	al, err := openAccessLog(logPath, m)
	if err != nil {
		t.Fatal(err)
	}
	svc := &service{mode: m, stats: stats, log: al}
	ts := &testService{
		srv:     httptest.NewServer(expose.Middleware(svc.routes())),
		statsd:  pc,
		logPath: logPath,
		log:     al,
	}
	t.Cleanup(ts.srv.Close)
	return ts
}

// closeLog flushes and closes the access log and returns its lines.
func (ts *testService) closeLog(t *testing.T) []string {
	t.Helper()
	if err := ts.log.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(ts.logPath)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// readStats returns the StatsD lines received, waiting briefly for each
// packet.
func (ts *testService) readStats(t *testing.T, want int) []string {
	t.Helper()
	var lines []string
	buf := make([]byte, 2048)
	for len(lines) < want {
		ts.statsd.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, _, err := ts.statsd.ReadFrom(buf)
		if err != nil {
			t.Fatalf("after %d StatsD lines: %v", len(lines), err)
		}
		lines = append(lines, strings.Split(string(buf[:n]), "\n")...)
	}
	return lines
}

type response struct {
	status      int
	contentType string
	body        string
}

func fetch(t *testing.T, client *http.Client, url string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", `test "agent"`+"\t1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header.Get("Content-Type"), string(body)}
}

var requests = []struct {
	query string
	want  response
}{
	{"?str=test&len=10&chr=*", response{200, "application/json", `{"str":"******test"}`}},
	{"?str=test&len=50&chr=*", response{200, "application/json", `{"str":"` + strings.Repeat("*", 46) + `test"}`}},
	{"?str=test&len=2", response{200, "application/json", `{"str":"test"}`}},
	{"?str=%3Cb%3E&len=5", response{200, "application/json", `{"str":"  \u003cb\u003e"}`}},
	{"?str=%22q%22&len=4&chr=%C3%A9", response{200, "application/json", `{"str":"é\"q\""}`}},
	{"?len=3&chr=0", response{200, "application/json", `{"str":"000"}`}},
	{"?str=test", response{400, "application/json", `{"error":"missing len: want an integer from 0 to 1024"}`}},
	{"?str=test&len=abc", response{400, "application/json", `{"error":"invalid len \"abc\": want an integer from 0 to 1024"}`}},
	{"?str=test&len=100000", response{400, "application/json", `{"error":"invalid len \"100000\": want an integer from 0 to 1024"}`}},
	{"?str=test&len=5&chr=ab", response{400, "application/json", `{"error":"invalid chr \"ab\": want exactly one character"}`}},
}

// TestModesAgree sends the same requests to both modes over HTTP and
// compares responses, StatsD lines and access log lines.
func TestModesAgree(t *testing.T) {
	statsLine := regexp.MustCompile(`^leftpad\.(requests:1\|c|(request|leftpad)_duration:\d+\.\d{3}\|ms)$`)
	logLine := regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d GET /v1/leftpad/\?\S* 127\.0\.0\.1:\d+ "test \\"agent\\"\\t1" \d+us$`)
	for _, m := range modes {
		ts := newTestService(t, m)
		for _, rq := range requests {
			got := fetch(t, ts.srv.Client(), ts.srv.URL+"/v1/leftpad/"+rq.query)
			if got != rq.want {
				t.Errorf("%v: GET %s = %+v, want %+v", m, rq.query, got, rq.want)
			}
		}

		stats := ts.readStats(t, 3*len(requests))
		for _, l := range stats {
			if !statsLine.MatchString(l) {
				t.Errorf("%v: StatsD line %q", m, l)
			}
		}
		if n := len(slices.DeleteFunc(stats, func(l string) bool { return l != "leftpad.requests:1|c" })); n != len(requests) {
			t.Errorf("%v: %d request counts, want %d", m, n, len(requests))
		}

		lines := ts.closeLog(t)
		if len(lines) != len(requests) {
			t.Errorf("%v: %d log lines, want %d", m, len(lines), len(requests))
		}
		for i, l := range lines {
			if !logLine.MatchString(l) {
				t.Errorf("%v: log line %q does not match %v", m, l, logLine)
			}
			if i < len(requests) && !strings.Contains(l, " /v1/leftpad/"+requests[i].query+" ") {
				t.Errorf("%v: log line %q is not for request %q", m, l, requests[i].query)
			}
		}
	}
}

func TestNotFound(t *testing.T) {
	ts := newTestService(t, optimized)
	resp, err := ts.srv.Client().Post(ts.srv.URL+"/v1/leftpad/?len=3", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", resp.StatusCode)
	}
	if got := fetch(t, ts.srv.Client(), ts.srv.URL+"/nope"); got.status != http.StatusNotFound {
		t.Errorf("GET /nope: status %d, want 404", got.status)
	}
}
