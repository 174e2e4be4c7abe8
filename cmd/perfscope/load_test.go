package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfscope/perfscope/internal/loadgen"
)

func parseLoadFlags(t *testing.T, args ...string) (*loadFlags, error) {
	t.Helper()
	// config sets GOMAXPROCS; other tests in this binary get theirs back.
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	var f loadFlags
	fs := pflag.NewFlagSet("load", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	return &f, fs.Parse(args)
}

func TestLoadFlagsConfig(t *testing.T) {
	body := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(body, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := parseLoadFlags(t, "-c", "3", "-n", "50", "-m", "post", "-H", "Content-Type: application/json",
		"-H", "X-A:1", "--body-file", body, "--timeout", "2s", "--no-keepalive", "-t", "1")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := f.config("http://127.0.0.1:8080/tx")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Concurrency != 3 || cfg.Requests != 50 || cfg.Duration != 0 || cfg.Method != "POST" ||
		cfg.Header.Get("Content-Type") != "application/json" || cfg.Header.Get("X-A") != "1" ||
		string(cfg.Body) != `{"a":1}` || cfg.Timeout != 2*time.Second || !cfg.DisableKeepAlive {
		t.Errorf("config %+v", cfg)
	}

	f, _ = parseLoadFlags(t)
	if cfg, err := f.config("http://localhost/"); err != nil || cfg.Duration != defaultLoadDuration {
		t.Errorf("no -n or -d: duration %s, error %v; want the default %s", cfg.Duration, err, defaultLoadDuration)
	}
}

func TestLoadFlagsUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		url  string
	}{
		{[]string{"-n", "10", "-d", "5s"}, "http://h/"},
		{[]string{"-c", "0"}, "http://h/"},
		{[]string{"-n", "-1"}, "http://h/"},
		{[]string{"-n", "0"}, "http://h/"},
		{[]string{"-d", "0"}, "http://h/"},
		{[]string{"-d", "-1s"}, "http://h/"},
		{[]string{"--max-errors", "-1"}, "http://h/"},
		{[]string{"--max-errors", "100"}, "http://h/"},
		{[]string{"--rate", "-5"}, "http://h/"},
		{[]string{"--timeout", "0s"}, "http://h/"},
		{[]string{"-k", "--no-keepalive"}, "http://h/"},
		{[]string{"-b", "x", "--body-file", "f"}, "http://h/"},
		{[]string{"-H", "NoColon"}, "http://h/"},
		{[]string{"-m", "GE T"}, "http://h/"},
		{nil, "localhost:8080/"},
		{nil, "ftp://h/"},
		{nil, "http:///path"},
	} {
		f, err := parseLoadFlags(t, tt.args...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.config(tt.url)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v %s: error %v, want a usage error", tt.args, tt.url, err)
		} else if len(tt.args) > 0 && !strings.HasPrefix(err.Error(), tt.args[0]+" ") && !strings.HasPrefix(err.Error(), tt.args[0]+":") {
			t.Errorf("%v: error %q, want one naming %s first", tt.args, err, tt.args[0])
		}
	}
}

// TestLoadFlagsZero: a load of zero requests or zero seconds is refused by
// both commands that send load, naming the flag, as is zero connections;
// --max-errors 0 means no failed request is allowed.
func TestLoadFlagsZero(t *testing.T) {
	for _, command := range []string{"load", "profile"} {
		for _, tc := range []struct{ flag, value, want string }{
			{"-n", "0", "-n 0: a load of no requests measures nothing"},
			{"-d", "0", "-d 0s: a load of no time measures nothing"},
			{"-c", "0", "-c 0: give at least 1 connection"},
		} {
			args := []string{command, tc.flag, tc.value, "http://127.0.0.1:1/"}
			_, code := perfCLI(t, args...)
			_, err := runCLI(t, args...)
			if code != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("perfscope %s: exit %d, %v; want exit 2 and %q", strings.Join(args, " "), code, err, tc.want)
			}
		}
	}
	f, _ := parseLoadFlags(t, "--max-errors", "0")
	if cfg, err := f.config("http://h/"); err != nil || cfg.MaxErrors != loadgen.NoFailures {
		t.Errorf("--max-errors 0: MaxErrors %v, %v; want loadgen.NoFailures", cfg.MaxErrors, err)
	}
}

// TestLoadMaxErrorsZero: with --max-errors 0 one failed request in 200
// fails the load, which the default 1% lets pass.
func TestLoadMaxErrorsZero(t *testing.T) {
	var n atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 100 {
			http.Error(w, "one failure", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(s.Close)

	if out, code := perfCLI(t, "load", "-q", "-n", "200", "-c", "2", s.URL); code != 0 {
		t.Errorf("1 failure in 200, default --max-errors: exit %d, want 0\n%s", code, out)
	}
	n.Store(0)
	out, err := runCLI(t, "load", "-q", "-n", "200", "-c", "2", "--max-errors", "0", s.URL)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(ee.msg, "any failed request fails a run (--max-errors 0)") {
		t.Errorf("1 failure in 200, --max-errors 0: %v; want exit 1 saying any failure fails\n%s", err, out)
	}
}

// runCLI runs perfscope with args and returns its stdout and exit error.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(io.Discard)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestLoadCommand(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(s.Close)

	out, err := runCLI(t, "load", "-q", "-n", "40", "-c", "2", "--format", "json", s.URL)
	if err != nil {
		t.Fatal(err)
	}
	var res loadgen.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json output: %v\n%s", err, out)
	}
	if res.Requests != 40 || res.Successes != 40 {
		t.Errorf("json result %+v", res)
	}

	// Every request failed: the load failed, exit status 1.
	out, err = runCLI(t, "load", "-q", "-n", "10", s.URL+"/missing")
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("load of a 404 path: %v; want exit status 1", err)
	}
	for _, want := range []string{"GET " + s.URL + "/missing\n", "10 in", "errors      10 (100.0%): status_404 10", "p99"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	out, err = runCLI(t, "load", "-q", "-n", "10", "--format", "markdown", s.URL)
	if err != nil || !strings.Contains(out, "- **errors**: none") {
		t.Errorf("markdown output = %q, %v", out, err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()
	_, err = runCLI(t, "load", "-q", "-n", "10", closed)
	if err == nil || !strings.Contains(err.Error(), "connection refused — is the service running?") {
		t.Errorf("unreachable target: error %v", err)
	}
}
