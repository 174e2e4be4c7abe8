// Package leftpad is the left-pad microservice of the seed article, a demo
// workload for perfscope. It pads strings, counts and times every request
// into StatsD over UDP and writes an access log line per request.
//
// It runs in one of two modes. naive is the way such a service is usually
// first written: string concatenation in a loop, fmt.Sprintf per metric, a
// strings.Replacer built per call, an unbuffered log.Logger and
// encoding/json. optimized fixes each of those, and nothing else, so a
// profile of each shows where the time went and what the fix bought.
// A third mode, leaky, is naive with a leak added: one request in 100
// leaves a goroutine parked forever (see auditor), for continuous
// profiling to find.
//
// Usage:
//
//	leftpad [flags]
//
// Endpoint:
//
//	GET /v1/leftpad/?str=S&len=N&chr=C
//	    returns {"str":"..."}: S left-padded with C to N characters (runes).
//	    len is required, 0 to 1024; chr is one character, default a space.
//	    Invalid parameters get 400 with {"error":"..."}.
//
// Profiles are served by package expose on a separate loopback port
// (--pprof-addr), with block and mutex profiling enabled; requests are
// labelled with their route (--route-labels). A --pprof-addr that is not
// loopback requires the PPROF_TOKEN environment variable (clients send it as
// a bearer token).
//
// On start it prints one line with the addresses it listens on, for example:
//
//	leftpad (naive) listening on http://127.0.0.1:8080, pprof on http://127.0.0.1:6060/debug/pprof/
//
// SIGINT or SIGTERM shuts it down gracefully, flushing the access log.
package leftpad

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/perfscope/perfscope/expose"
)

// config holds the command-line flags.
type config struct {
	mode      mode
	leaky     bool
	addr      string
	pprofAddr string
	noExpose  bool
	labels    string
	blockRate int
	blockOn   bool
	mutexFrac int
	statsd    string
	prefix    string
	logFile   string
}

// parseFlags parses args; it returns flag.ErrHelp after printing help.
func parseFlags(args []string, stdout io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("leftpad", flag.ContinueOnError)
	modeName := fs.String("mode", "naive", "implementation: naive (as first written), optimized, or leaky (naive, leaking a goroutine per 100 requests)")
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to serve the API on; port 0 picks a free port")
	fs.StringVar(&c.pprofAddr, "pprof-addr", expose.DefaultAddr, "address to serve /debug/pprof/ on, separate from the API; empty disables; not loopback requires PPROF_TOKEN")
	fs.BoolVar(&c.noExpose, "no-expose", false, "serve no profiles and skip the route-labelling middleware (to measure their cost)")
	fs.StringVar(&c.labels, "route-labels", "goroutine", "how requests are labelled with their route: goroutine (expose.Middleware: the goroutine serving the request, no allocation), context (expose.ContextMiddleware: the goroutine and the request's context) or none (profiles served, requests not labelled)")
	fs.IntVar(&c.blockRate, "block-profile-rate", expose.DefaultBlockProfileRate, "block profile rate in nanoseconds (see runtime.SetBlockProfileRate); 0 leaves block profiling off")
	fs.BoolVar(&c.blockOn, "block-profile-always", false, "keep block profiling on all the time, not only while a profile is being collected")
	fs.IntVar(&c.mutexFrac, "mutex-profile-fraction", expose.DefaultMutexProfileFraction, "record one in this many mutex contention events (see runtime.SetMutexProfileFraction); 0 leaves mutex profiling off")
	fs.StringVar(&c.statsd, "statsd", "127.0.0.1:8125", "StatsD address (UDP) to send request metrics to; empty disables")
	fs.StringVar(&c.prefix, "statsd-prefix", "leftpad", "prefix of the StatsD metric names")
	fs.StringVar(&c.logFile, "log", filepath.Join(os.TempDir(), "leftpad-access.log"), "access log file (appended to)")
	// Errors are reported by the caller in one line; help goes to stdout.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprintln(stdout, "Usage: leftpad [flags]\n\nServes GET /v1/leftpad/?str=S&len=N&chr=C.\n\nFlags:")
			fs.PrintDefaults()
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch c.labels {
	case "goroutine", "context", "none":
	default:
		return c, fmt.Errorf("unknown --route-labels %q: use goroutine, context or none", c.labels)
	}
	if *modeName == "leaky" {
		c.leaky, *modeName = true, "naive"
	}
	m, err := parseMode(*modeName)
	if err != nil {
		return c, err
	}
	c.mode = m
	return c, nil
}

// Run serves until ctx is done and returns the exit status: 0 after a clean
// shutdown, 1 on failure, 2 on bad flags.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "leftpad: %v (see leftpad -help)\n", err)
		return 2
	}
	if err := serve(ctx, c, stdout); err != nil {
		fmt.Fprintf(stderr, "leftpad: %v\n", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, c config, stdout io.Writer) (err error) {
	stats, err := newStatsd(c.statsd, c.prefix, c.mode)
	if err != nil {
		return err
	}
	defer stats.Close()
	accessLog, err := openAccessLog(c.logFile, c.mode)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := accessLog.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	svc := &service{mode: c.mode, stats: stats, log: accessLog}
	var handler http.Handler = svc.routes()
	name := c.mode.String()
	if c.leaky {
		handler, name = (&auditor{}).wrap(handler), "leaky"
	}
	pprofNote := "pprof off"
	if !c.noExpose {
		switch c.labels {
		case "goroutine":
			handler = expose.Middleware(handler)
		case "context":
			handler = expose.ContextMiddleware(handler)
		}
		if c.pprofAddr != "" {
			// For expose, 0 means its default and a negative value "leave
			// alone"; on the command line 0 means off, as in the runtime.
			off := func(v int) int {
				if v == 0 {
					return -1
				}
				return v
			}
			prof, err := expose.Start(ctx, expose.Options{
				Addr:                 c.pprofAddr,
				Token:                os.Getenv("PPROF_TOKEN"),
				BlockProfileRate:     off(c.blockRate),
				BlockProfileAlways:   c.blockOn,
				MutexProfileFraction: off(c.mutexFrac),
			})
			if errors.Is(err, expose.ErrAuthRequired) {
				return fmt.Errorf("--pprof-addr %s is not a loopback address: set PPROF_TOKEN (at least 16 characters) to require it as a bearer token", c.pprofAddr)
			}
			if err != nil {
				return fmt.Errorf("pprof: %w", err)
			}
			defer prof.Close()
			pprofNote = "pprof on " + prof.URL()
		}
	}

	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.addr, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
	}
	fmt.Fprintf(stdout, "leftpad (%s) listening on http://%s, %s\n", name, ln.Addr(), pprofNote)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
