// Package txsummary is the JSON transaction-summary service of the seed
// article, a demo workload for perfscope. It serves totals of balances and
// transactions over a data set of users kept in a JSON file.
//
// It runs in one of two modes. naive reads and parses the whole file on
// every request, into generic maps, and sums each amount as a big.Rat.
// optimized decodes the file once into typed structs holding only the fields
// it needs, sums integer cents, and serves the precomputed response until
// the file's modification time or size changes.
//
// Usage:
//
//	txsummary [flags]
//	txsummary -gen FILE    write the data set to FILE and exit
//
// Endpoint:
//
//	GET /summary
//	    returns {"users":N,"transactions":N,"balance_total":"D",
//	    "credit_total":"D","debit_total":"D","transaction_total":"D"},
//	    totals as exact decimal strings with two decimal places.
//
// The data set (--data) is generated deterministically, about 2 MB, on first
// start if the file does not exist. Amounts are decimal strings:
// [-]digits[.d[d]]. Optimized mode refuses anything else with a 500 naming
// the amount; naive mode accepts whatever big.Rat parses.
//
// Profiles are served by package expose on a separate loopback port
// (--pprof-addr), with block and mutex profiling enabled; requests are
// labelled with their route. A --pprof-addr that is not loopback requires
// the PPROF_TOKEN environment variable.
//
// On start it prints one line with the addresses it listens on, for example:
//
//	txsummary (naive) listening on http://127.0.0.1:8081, pprof on http://127.0.0.1:6061/debug/pprof/
//
// SIGINT or SIGTERM shuts it down gracefully.
package txsummary

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/perfscope/perfscope/expose"
)

// config holds the command-line flags.
type config struct {
	mode      mode
	addr      string
	pprofAddr string
	noExpose  bool
	data      string
	gen       string
}

// parseFlags parses args; it returns flag.ErrHelp after printing help.
func parseFlags(args []string, stdout io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("txsummary", flag.ContinueOnError)
	modeName := fs.String("mode", "naive", "implementation: naive (parse per request) or optimized (parse once)")
	// The defaults differ from leftpad's so that both examples can run at once.
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8081", "address to serve the API on; port 0 picks a free port")
	fs.StringVar(&c.pprofAddr, "pprof-addr", "127.0.0.1:6061", "address to serve /debug/pprof/ on, separate from the API; empty disables; not loopback requires PPROF_TOKEN")
	fs.BoolVar(&c.noExpose, "no-expose", false, "serve no profiles and skip the route-labelling middleware (to measure their cost)")
	fs.StringVar(&c.data, "data", defaultDataPath(), "data set file; generated if it does not exist")
	fs.StringVar(&c.gen, "gen", "", "write the data set to this file and exit")
	fs.SetOutput(io.Discard) // errors are reported by the caller in one line
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprintln(stdout, "Usage: txsummary [flags]\n\nServes GET /summary.\n\nFlags:")
			fs.PrintDefaults()
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
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
		fmt.Fprintf(stderr, "txsummary: %v (see txsummary -help)\n", err)
		return 2
	}
	if c.gen != "" {
		err = writeDataset(c.gen, defaultUsers)
	} else {
		err = serve(ctx, c, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "txsummary: %v\n", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, c config, stdout, stderr io.Writer) error {
	generated, err := ensureDataset(c.data)
	if err != nil {
		return err
	}
	if generated {
		fmt.Fprintf(stderr, "txsummary: generated data set %s\n", c.data)
	}
	svc := &service{mode: c.mode, path: c.data, recheck: recheckInterval}
	if c.mode == optimized {
		// Parse at start, so a bad file fails here and not on the first
		// request.
		if _, err := svc.summaryOptimized(); err != nil {
			return err
		}
	}

	var handler http.Handler = svc.routes()
	pprofNote := "pprof off"
	if !c.noExpose {
		handler = expose.Middleware(handler)
		if c.pprofAddr != "" {
			prof, err := expose.Start(ctx, expose.Options{Addr: c.pprofAddr, Token: os.Getenv("PPROF_TOKEN")})
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
	fmt.Fprintf(stdout, "txsummary (%s) listening on http://%s, %s\n", c.mode, ln.Addr(), pprofNote)

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
