package expose

import (
	"context"
	"crypto/sha256"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestNeedsAuth(t *testing.T) {
	for _, tt := range []struct {
		host        string
		requireAuth bool
		want        bool
	}{
		{"127.0.0.1", false, false},
		{"127.0.0.2", false, false},
		{"::1", false, false},
		{"localhost", false, false},
		{"LocalHost", false, false},
		{"127.0.0.1", true, true},
		{"", false, true},
		{"0.0.0.0", false, true},
		{"::", false, true},
		{"192.0.2.10", false, true},
		{"2001:db8::1", false, true},
		{"example.com", false, true},
		{"localhost.example.com", false, true},
	} {
		if got := needsAuth(tt.host, tt.requireAuth); got != tt.want {
			t.Errorf("needsAuth(%q, %v) = %v, want %v", tt.host, tt.requireAuth, got, tt.want)
		}
	}
}

func TestStartRefusesUnauthenticatedNetworkAddress(t *testing.T) {
	for _, opts := range []Options{
		{Addr: "0.0.0.0:0"},
		{Addr: ":0"},
		{Addr: "[::]:0"},
		{Addr: "127.0.0.1:0", RequireAuth: true},
		// A TLS configuration that does not verify client certificates
		// encrypts but does not authenticate.
		{Addr: "0.0.0.0:0", TLSConfig: serverOnlyTLS(t)},
	} {
		s, err := Start(context.Background(), opts)
		if err == nil {
			s.Close()
			t.Errorf("Start(%+v) succeeded, want ErrAuthRequired", opts)
			continue
		}
		if !errors.Is(err, ErrAuthRequired) {
			t.Errorf("Start(Addr %q) error = %v, want ErrAuthRequired", opts.Addr, err)
		}
	}
}

func TestStartRejectsBadOptions(t *testing.T) {
	for _, tt := range []struct {
		opts Options
		want string
	}{
		{Options{Addr: "127.0.0.1:0", Token: "short"}, "at least 16"},
		{Options{Addr: "127.0.0.1"}, "missing port"},
		{Options{Addr: "127.0.0.1:0", MaxSeconds: -1}, "negative"},
	} {
		s, err := Start(context.Background(), tt.opts)
		if err == nil {
			s.Close()
			t.Errorf("Start(%+v) succeeded, want error containing %q", tt.opts, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Start(%+v) error = %q, want it to contain %q", tt.opts, err, tt.want)
		}
	}
}

// TestInterfaceAddress starts on an address of one of this machine's
// non-loopback interfaces: refused without authentication, served with a
// token. It sends no traffic to that address: tests here talk to loopback
// only, and TestTokenOnNetworkListener covers the requests.
func TestInterfaceAddress(t *testing.T) {
	ip := interfaceAddress(t)
	addr := net.JoinHostPort(ip.String(), "0")
	if _, err := Start(context.Background(), Options{Addr: addr}); !errors.Is(err, ErrAuthRequired) {
		t.Errorf("Start(%s) without auth: %v, want ErrAuthRequired", addr, err)
	}
	s := start(t, Options{Addr: addr, Token: testToken})
	if got := s.Addr().(*net.TCPAddr).IP; !got.Equal(ip) {
		t.Errorf("listening on %v, want %v", got, ip)
	}
}

// interfaceAddress returns a non-loopback unicast address of this machine,
// or skips the test.
func interfaceAddress(t *testing.T) net.IP {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Skipf("no network interfaces: %v", err)
	}
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.IsGlobalUnicast() && n.IP.To4() != nil {
				return n.IP
			}
		}
	}
	t.Skip("no non-loopback IPv4 address on this machine")
	return nil
}

// TestTokenOnNetworkListener listens on every interface, which Start allows
// only with a token, and checks that unauthenticated requests are refused.
// The client connects over loopback: it reaches the same listener without
// sending traffic to any other address.
func TestTokenOnNetworkListener(t *testing.T) {
	s := start(t, Options{Addr: "0.0.0.0:0", Token: testToken})
	url := s.URL() + "cmdline"
	if code, _ := get(t, nil, url, ""); code != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", code)
	}
	if code, _ := get(t, nil, url, "Bearer "+testToken); code != http.StatusOK {
		t.Errorf("right token: status %d, want 200", code)
	}
}

// TestTokenOnLoopback uses RequireAuth to exercise the same checks on a
// loopback listener.
func TestTokenOnLoopback(t *testing.T) {
	s := start(t, Options{RequireAuth: true, Token: testToken})
	base := strings.TrimSuffix(s.URL(), "/debug/pprof/")
	for _, tt := range []struct {
		name, path, authorization string
		want                      int
	}{
		{"no header", "/debug/pprof/cmdline", "", http.StatusUnauthorized},
		{"wrong token same length", "/debug/pprof/cmdline", "Bearer " + strings.Repeat("x", len(testToken)), http.StatusUnauthorized},
		{"wrong token shorter", "/debug/pprof/cmdline", "Bearer abc", http.StatusUnauthorized},
		{"wrong token longer", "/debug/pprof/cmdline", "Bearer " + testToken + "x", http.StatusUnauthorized},
		{"token prefix", "/debug/pprof/cmdline", "Bearer " + testToken[:len(testToken)-1], http.StatusUnauthorized},
		{"empty bearer", "/debug/pprof/cmdline", "Bearer ", http.StatusUnauthorized},
		{"basic scheme", "/debug/pprof/cmdline", "Basic " + testToken, http.StatusUnauthorized},
		{"token without scheme", "/debug/pprof/cmdline", testToken, http.StatusUnauthorized},
		{"token in query", "/debug/pprof/cmdline?token=" + testToken, "", http.StatusUnauthorized},
		{"token in access_token", "/debug/pprof/cmdline?access_token=" + testToken, "", http.StatusUnauthorized},
		{"right token", "/debug/pprof/cmdline", "Bearer " + testToken, http.StatusOK},
		{"scheme in lower case", "/debug/pprof/cmdline", "bearer " + testToken, http.StatusOK},
		{"protects metrics", "/debug/metrics", "", http.StatusUnauthorized},
		{"protects unknown paths", "/debug/pprof/nosuchprofile", "", http.StatusUnauthorized},
	} {
		code, body := get(t, nil, base+tt.path, tt.authorization)
		if code != tt.want {
			t.Errorf("%s: status %d, want %d (body %q)", tt.name, code, tt.want, body)
		}
	}
}

// TestTokenComparisonPath checks that every request, whatever its token's
// length or content, reaches one comparison of two SHA-256 digests: the
// comparison's time then cannot depend on the presented token. Timing it
// directly would be a flaky test; the code path is what makes it hold.
func TestTokenComparisonPath(t *testing.T) {
	a, err := newAuthenticator(Options{Addr: "127.0.0.1:0", Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	var calls, lengths []int
	a.compare = func(x, y []byte) int {
		calls = append(calls, 1)
		lengths = append(lengths, len(x), len(y))
		if string(x) == string(y) {
			return 1
		}
		return 0
	}
	h := a.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, authorization := range []string{
		"",
		"Bearer a",
		"Bearer " + strings.Repeat("y", len(testToken)),
		"Bearer " + strings.Repeat("z", 4096),
		"Basic abc",
		"Bearer " + testToken,
	} {
		calls, lengths = nil, nil
		r := httptest.NewRequest(http.MethodGet, "/debug/pprof/cmdline", nil)
		if authorization != "" {
			r.Header.Set("Authorization", authorization)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if len(calls) != 1 {
			t.Errorf("Authorization %.20q: %d comparisons, want 1", authorization, len(calls))
		}
		for _, n := range lengths {
			if n != sha256.Size {
				t.Errorf("Authorization %.20q: compared %d bytes, want digests of %d", authorization, n, sha256.Size)
			}
		}
	}
}

func TestBearerToken(t *testing.T) {
	for _, tt := range []struct {
		header, token string
		ok            bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER  abc", "abc", true},
		{"Bearer", "", false},
		{"Basic abc", "", false},
		{"", "", false},
	} {
		token, ok := bearerToken(tt.header)
		if token != tt.token || ok != tt.ok {
			t.Errorf("bearerToken(%q) = %q, %v; want %q, %v", tt.header, token, ok, tt.token, tt.ok)
		}
	}
}
