package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/report"
)

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
		return cfg, usagef("-c %d: give at least 1 connection (the requests in flight at once)", f.concurrency)
	case f.requests < 0 || f.requests == 0 && f.given("requests"):
		return cfg, usagef("-n %d: a load of no requests measures nothing: give at least 1, or -d for a duration", f.requests)
	case f.duration < 0 || f.duration == 0 && f.given("duration"):
		return cfg, usagef("-d %s: a load of no time measures nothing: give a duration such as 10s, or -n for a number of requests", f.duration)
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
	case f.maxErrors < 0 || f.maxErrors >= 100:
		return cfg, usagef("--max-errors %g: give a percentage from 0 (no failed request allowed) to below 100", f.maxErrors)
	case f.body != "" && f.bodyFile != "":
		return cfg, usagef("-b and --body-file both give the body: give one")
	}
	method, err := loadgen.CheckMethod(f.method)
	if err != nil {
		return cfg, usagef("-m: %v", err)
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
	maxErrors := f.maxErrors / 100
	if maxErrors == 0 {
		maxErrors = loadgen.NoFailures
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
		MaxErrors:          maxErrors,
	}, nil
}

// given reports whether the flag was on the command line, as opposed to
// left at its default.
func (f *loadFlags) given(name string) bool {
	return f.fs != nil && f.fs.Changed(name)
}

// checkLoadURL is loadgen.CheckURL with its complaint as a usage error.
func checkLoadURL(raw string) error {
	if err := loadgen.CheckURL(raw); err != nil {
		return usageError{err}
	}
	return nil
}

// parseHeaders is loadgen.ParseHeaders with its complaint as a usage error.
func parseHeaders(flags []string) (http.Header, error) {
	h, err := loadgen.ParseHeaders(flags)
	if err != nil {
		return nil, usagef("-H: %v", err)
	}
	return h, nil
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
