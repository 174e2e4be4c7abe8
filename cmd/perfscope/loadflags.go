package main

import (
	"runtime"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfscope/perfscope/internal/loadgen"
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

	// fs tells a flag given as 0 from one not given.
	fs *pflag.FlagSet
}

func (f *loadFlags) register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.IntVarP(&f.concurrency, "concurrency", "c", 8,
		"connections kept busy at once (closed loop), or the most requests in flight at once (with --rate)")
	fs.Int64VarP(&f.requests, "requests", "n", 0,
		"send exactly this many requests, then stop (instead of -d); at least 1")
	fs.DurationVarP(&f.duration, "duration", "d", 0,
		"send for this long, e.g. 30s or 2m (instead of -n; default 10s when neither is given); more than 0")
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
		"percent of failed requests (errors and non-2xx answers) above which the load failed: the report leads with it and the exit status is 1;\n"+
			"0 allows no failed request")
	fs.IntVarP(&f.threads, "threads", "t", 0,
		"CPU cores the generator may use at once (GOMAXPROCS), like wrk's -t; 0 means one per 4 cores, at least 1,\n"+
			"which leaves a service on the same machine most of it; raise it when the service runs elsewhere")
}

// defaultThreads gives the generator a quarter of the machine: measured on
// 2 cores shared with the service, one thread sends more requests a second
// than two, because idle Go threads spin and hand work to each other on the
// cores the service needs.
func defaultThreads() int { return max(1, runtime.NumCPU()/4) }
