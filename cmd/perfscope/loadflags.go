package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/report"
)

// defaultLoadDuration bounds a run given neither -n nor -d.
const defaultLoadDuration = 10 * time.Second

// loadFlags are the load flags shared by every command that sends load
// (load, profile): register adds them to a command, config validates them.
type loadFlags struct {
	concurrency int
	requests    int64
	duration    time.Duration
	rate        float64
	method      string
	headers     []string
	body        string
	bodyFile    string
	timeout     time.Duration
	keepAlive   bool
	noKeepAlive bool
	insecure    bool
	threads     int
	maxErrors   float64
}

func (f *loadFlags) register(fs *pflag.FlagSet) {
	fs.IntVarP(&f.concurrency, "concurrency", "c", 8,
		"connections kept busy at once (closed loop), or the most requests in flight at once (with --rate)")
	fs.Int64VarP(&f.requests, "requests", "n", 0,
		"send exactly this many requests, then stop (instead of -d)")
	fs.DurationVarP(&f.duration, "duration", "d", 0,
		"send for this long, e.g. 30s or 2m (instead of -n; default 10s when neither is given)")
	fs.Float64Var(&f.rate, "rate", 0,
		"open loop: send this many requests per second at a constant rate, whether or not earlier ones were answered;\n"+
			"latency counts from each request's intended send time, so server stalls are not hidden (default: closed loop)")
	fs.StringVarP(&f.method, "method", "m", "GET", "HTTP method")
	fs.StringArrayVarP(&f.headers, "header", "H", nil,
		`request header "Name: value"; repeat for more headers (a Host header replaces the URL's host)`)
	fs.StringVarP(&f.body, "body", "b", "", "request body, sent with a Content-Length")
	fs.StringVar(&f.bodyFile, "body-file", "", "read the request body from this file (instead of -b)")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second,
		"a request without a complete response after this long counts as a timeout error")
	fs.BoolVarP(&f.keepAlive, "keepalive", "k", false,
		"reuse connections between requests; this is the default, and -k is accepted as in ab")
	fs.BoolVar(&f.noKeepAlive, "no-keepalive", false,
		"open a new connection for every request (measures connection setup too)")
	fs.BoolVar(&f.insecure, "insecure", false,
		"https: accept any server certificate, such as a self-signed one")
	fs.Float64Var(&f.maxErrors, "max-errors", 100*loadgen.DefaultMaxErrors,
		"percent of failed requests (errors and non-2xx answers) above which the load failed: the report leads with it and the exit status is 1")
	fs.IntVarP(&f.threads, "threads", "t", 0,
		"CPU cores the generator may use at once (GOMAXPROCS), like wrk's -t; 0 means one per 4 cores, at least 1,\n"+
			"which leaves a service on the same machine most of it; raise it when the service runs elsewhere")
}

// defaultThreads gives the generator a quarter of the machine: measured on
// 2 cores shared with the service, one thread sends more requests a second
// than two, because idle Go threads spin and hand work to each other on the
// cores the service needs.
func defaultThreads() int { return max(1, runtime.NumCPU()/4) }

// config validates the flags against each other and returns the run they
// describe for rawURL. Bad input gets a usage error. Because the load runs
// in this process, config also sets GOMAXPROCS to --threads.
func (f *loadFlags) config(rawURL string) (loadgen.Config, error) {
	var cfg loadgen.Config
	if err := checkLoadURL(rawURL); err != nil {
		return cfg, err
	}
	switch {
	case f.concurrency < 1:
		return cfg, usagef("-c %d: concurrency must be at least 1", f.concurrency)
	case f.requests < 0:
		return cfg, usagef("-n %d: the number of requests must be positive", f.requests)
	case f.duration < 0:
		return cfg, usagef("-d %s: the duration must be positive", f.duration)
	case f.requests > 0 && f.duration > 0:
		return cfg, usagef("-n and -d both bound the run: give -n for a number of requests or -d for a duration, not both")
	case f.rate < 0 || f.rate > 1e7:
		return cfg, usagef("--rate %g: give a rate between 0 and 10000000 requests per second", f.rate)
	case f.timeout <= 0:
		return cfg, usagef("--timeout %s: the timeout must be positive", f.timeout)
	case f.keepAlive && f.noKeepAlive:
		return cfg, usagef("-k and --no-keepalive contradict each other: give one")
	case f.threads < 0:
		return cfg, usagef("-t %d: threads must be positive", f.threads)
	case f.maxErrors <= 0 || f.maxErrors >= 100:
		return cfg, usagef("--max-errors %g: give a percentage above 0 and below 100", f.maxErrors)
	case f.body != "" && f.bodyFile != "":
		return cfg, usagef("-b and --body-file both give the body: give one")
	}
	method := strings.ToUpper(f.method)
	if method == "" || strings.ContainsAny(method, " \t\r\n:/") {
		return cfg, usagef("-m %q: not an HTTP method", f.method)
	}
	header, err := parseHeaders(f.headers)
	if err != nil {
		return cfg, err
	}
	body := []byte(f.body)
	if f.bodyFile != "" {
		b, err := os.ReadFile(f.bodyFile)
		if err != nil {
			return cfg, fmt.Errorf("read --body-file: %w", err)
		}
		body = b
	}
	threads := f.threads
	if threads == 0 {
		threads = defaultThreads()
	}
	runtime.GOMAXPROCS(threads)
	duration := f.duration
	if f.requests == 0 && duration == 0 {
		duration = defaultLoadDuration
	}
	return loadgen.Config{
		URL:                rawURL,
		Method:             method,
		Header:             header,
		Body:               body,
		Concurrency:        f.concurrency,
		Requests:           f.requests,
		Duration:           duration,
		Rate:               f.rate,
		Timeout:            f.timeout,
		DisableKeepAlive:   f.noKeepAlive,
		InsecureSkipVerify: f.insecure,
		MaxErrors:          f.maxErrors / 100,
	}, nil
}

// checkLoadURL accepts http:// and https:// URLs with a host, and says what
// to type otherwise.
func checkLoadURL(raw string) error {
	if !strings.Contains(raw, "://") {
		return usagef("URL %q has no scheme: did you mean http://%s ?", raw, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return usagef("invalid URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return usagef("URL %q: only http:// and https:// are supported", raw)
	}
	if u.Hostname() == "" {
		return usagef("URL %q has no host: want http://host[:port]/path", raw)
	}
	return nil
}

// parseHeaders parses "Name: value" header flags.
func parseHeaders(flags []string) (http.Header, error) {
	header := http.Header{}
	for _, h := range flags {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") || strings.ContainsAny(value, "\r\n") {
			return nil, usagef(`-H %q: want "Name: value"`, h)
		}
		header.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	return header, nil
}

// check reports an unreachable target in one line before any load starts
// (loadgen.Check), adding the flag to use when only the certificate is in
// the way.
func (f *loadFlags) check(ctx context.Context, cfg loadgen.Config) error {
	err := loadgen.Check(ctx, cfg)
	var ce *tls.CertificateVerificationError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w (to accept it anyway, add --insecure)", err)
	}
	return err
}

// loadFailed is the exit error of a command whose load failed
// (report.LoadFailure), or nil.
func loadFailed(res *loadgen.Result) error {
	if msg := report.LoadFailure(res); msg != "" {
		return exitError{code: 1, msg: msg}
	}
	return nil
}
