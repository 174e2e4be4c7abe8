package expose

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"runtime"
	"sync"
)

// Defaults used when the corresponding Options field is zero.
const (
	// DefaultAddr is loopback only: profiles reveal source paths, command
	// lines and memory contents, so reaching them from another host must be a
	// deliberate choice that comes with authentication.
	DefaultAddr = "127.0.0.1:6060"

	// DefaultBlockProfileRate records every blocking event of 1ms or more
	// and a sample of shorter ones, each with probability duration/1ms
	// (the profile scales them back, so totals stay unbiased). Block
	// profiling is on only while a profile is being collected (see
	// Options.BlockProfileRate).
	//
	// With block profiling on at any rate, the runtime reads the CPU's
	// cycle counter when a goroutine starts a channel operation, select,
	// sync.Cond wait or contended lock that may block, and again when it is
	// woken. That is the price that no rate lowers: about 130ns per
	// blocking event on the virtual machine bench/expose was measured on
	// (BenchmarkBlockProfileRate), where reading the counter is slow, and
	// a fraction of that where it takes a few nanoseconds. An HTTP server
	// blocks about once per request (net/http waits on a sync.Cond in
	// connReader.abortPendingRead for some microseconds). On the leftpad
	// example, whose requests take 30-35µs of CPU, that cost 0.7-0.8% of
	// its throughput end to end, which is why block profiling is off while
	// nobody profiles. The rate decides what recording costs on top: an
	// event recorded has its stack walked and hashed under a global lock,
	// about a microsecond. At 100µs one in ten of those 10µs waits was
	// recorded; at 1ms one in a hundred, while every wait long enough to
	// matter for latency still is.
	//
	// Set Options.BlockProfileRate to -1 to leave block profiling alone
	// (off, Go's default, unless the program turns it on itself).
	DefaultBlockProfileRate = 1_000_000

	// DefaultMutexProfileFraction records on average one in 100 contention
	// events. Unlike block profiling it costs nothing until a lock is
	// contended: the contended unlock draws a random number and records one
	// in 100 with its stack. A service whose locks are rarely contended pays
	// next to nothing (BenchmarkMutexProfileFraction, bench/expose), and
	// a few seconds of load still yield a usable profile.
	DefaultMutexProfileFraction = 100

	// DefaultMaxSeconds bounds the seconds parameter of profile, trace,
	// wall and delta-profile requests. Longer captures hold a CPU profiler
	// slot (there is only one per process) and a connection for minutes, and
	// are far more often a typo than an intent.
	DefaultMaxSeconds = 60

	// minTokenLength rejects tokens short enough to guess.
	minTokenLength = 16
)

// ErrAuthRequired is returned by Start when asked to listen on a non-loopback
// address (or with Options.RequireAuth) without a token or mutual TLS.
var ErrAuthRequired = errors.New("expose: authentication required")

// Options configures Start. The zero value serves on DefaultAddr without
// authentication, with the default profile rates.
type Options struct {
	// Addr is the TCP address to listen on, "host:port". Port 0 picks a free
	// port; Server.Addr reports it. Default DefaultAddr.
	Addr string

	// Token, if set, is required as "Authorization: Bearer <Token>" on every
	// request. At least 16 characters.
	Token string

	// TLSConfig, if set, serves HTTPS with it. It must carry the server's
	// certificate. With ClientAuth tls.RequireAndVerifyClientCert and
	// ClientCAs set it authenticates clients by certificate (mutual TLS),
	// which is enough to listen on a non-loopback address without a Token.
	TLSConfig *tls.Config

	// RequireAuth requires a Token or mutual TLS even on loopback, for hosts
	// where other local users must not read this process's profiles.
	RequireAuth bool

	// BlockProfileRate is passed to runtime.SetBlockProfileRate: a blocking
	// event lasting d nanoseconds is recorded with probability d/rate (always
	// when d >= rate). 0 means DefaultBlockProfileRate; negative leaves the
	// process's setting alone.
	//
	// Block profiling is on only while a profile is being collected: while
	// a CPU profile, an execution trace, a wall-clock profile or a block
	// profile with seconds=N is being taken, and for 10 seconds after the
	// last of them ends. So a client that takes a CPU profile and snapshots
	// of the block profile at its start and end (as perfscope profile
	// does), or a block profile with seconds=N, sees every blocking event
	// of its window, while a service that nobody profiles does not pay what
	// block profiling costs each blocking goroutine (see
	// DefaultBlockProfileRate). The cumulative block profile therefore
	// holds only the events of those windows.
	BlockProfileRate int

	// BlockProfileAlways keeps block profiling on from Start to Close, for
	// clients that read the cumulative block profile without taking
	// profiles of any other kind.
	BlockProfileAlways bool

	// MutexProfileFraction is passed to runtime.SetMutexProfileFraction: on
	// average one in this many contention events is recorded. 0 means
	// DefaultMutexProfileFraction; negative leaves the process's setting alone.
	MutexProfileFraction int

	// MaxSeconds bounds every seconds query parameter. 0 means DefaultMaxSeconds.
	MaxSeconds int

	// ErrorLog receives the HTTP server's errors (failed TLS handshakes,
	// broken connections). Nil means the log package's standard logger.
	ErrorLog *log.Logger
}

// A Server serves profiling endpoints on its own listener. It is safe for
// concurrent use. Call Close, or cancel the context given to Start, to stop it.
type Server struct {
	srv      *http.Server
	ln       net.Listener
	scheme   string
	done     chan struct{} // closed when Serve returned
	serveErr error         // Serve's result, valid after done
	stopOnce sync.Once
	stopErr  error
	restore  func()
	sampler  *blockSampler // nil unless block profiling is on demand
}

// Start listens on opts.Addr and serves the profiling endpoints listed in the
// package documentation until ctx is done or Close is called. It sets the
// mutex profile fraction, and the block profile rate while profiles are
// being collected (see Options), for the whole process; Close puts them
// back.
//
// Start returns ErrAuthRequired (wrapped) rather than serving profiles to the
// network unauthenticated.
func Start(ctx context.Context, opts Options) (*Server, error) {
	return startLimited(ctx, opts, defaultLimits())
}

// startLimited is Start with the server's time and header bounds given.
func startLimited(ctx context.Context, opts Options, lim limits) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	auth, err := newAuthenticator(opts)
	if err != nil {
		return nil, err
	}

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("expose: %w", err) // net names the address
	}
	// The address decided before listening came from the configured host;
	// check what was actually bound too, in case a name resolved elsewhere.
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && !auth.enabled() {
		ln.Close()
		return nil, authRequiredError(ln.Addr().String(), false)
	}

	s := &Server{
		ln:     ln,
		scheme: "http",
		done:   make(chan struct{}),
	}
	if opts.TLSConfig != nil {
		s.scheme = "https"
		ln = tls.NewListener(ln, opts.TLSConfig)
	}
	sampler, restore := setProfileRates(opts)
	s.sampler, s.restore = sampler, restore
	s.srv = &http.Server{
		Handler:           auth.wrap(newMux(opts, lim, sampler)),
		ReadHeaderTimeout: lim.readHeader,
		ReadTimeout:       lim.read,
		// Captures extend the write deadline by their length (see
		// limits.write), so this does not cut profiles short.
		WriteTimeout:   lim.write,
		IdleTimeout:    lim.idle,
		MaxHeaderBytes: lim.maxHeaderBytes,
		ErrorLog:       opts.ErrorLog,
	}

	go func() {
		s.serveErr = s.srv.Serve(ln)
		close(s.done)
	}()
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				s.Close()
			case <-s.done:
			}
		}()
	}
	return s, nil
}

// Addr returns the address the server listens on, with the actual port when
// Options.Addr asked for port 0.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL returns the base URL of the profile index, such as
// "http://127.0.0.1:6060/debug/pprof/". A listener on an unspecified
// address (0.0.0.0 or ::, which Go listens on as one dual-stack socket) is
// reported with 127.0.0.1, which reaches it from this host.
func (s *Server) URL() string {
	host, port, _ := net.SplitHostPort(s.ln.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return s.scheme + "://" + net.JoinHostPort(host, port) + "/debug/pprof/"
}

// Close stops the server at once, ending profile captures in progress, and
// restores the block and mutex profile rates it changed. It returns the
// error that stopped serving, if it was not Close itself.
func (s *Server) Close() error {
	s.stopOnce.Do(func() {
		s.srv.Close()
		<-s.done
		if !errors.Is(s.serveErr, http.ErrServerClosed) {
			s.stopErr = fmt.Errorf("expose: serve on %s: %w", s.ln.Addr(), s.serveErr)
		}
		s.restore()
	})
	return s.stopErr
}

// withDefaults validates opts and fills in defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return o, fmt.Errorf("expose: address %q: %w", o.Addr, err)
	}
	if o.BlockProfileRate == 0 {
		o.BlockProfileRate = DefaultBlockProfileRate
	}
	if o.MutexProfileFraction == 0 {
		o.MutexProfileFraction = DefaultMutexProfileFraction
	}
	if o.MaxSeconds == 0 {
		o.MaxSeconds = DefaultMaxSeconds
	}
	if o.MaxSeconds < 0 {
		return o, fmt.Errorf("expose: MaxSeconds %d is negative", o.MaxSeconds)
	}
	if o.Token != "" && len(o.Token) < minTokenLength {
		return o, fmt.Errorf("expose: Token is %d characters; use at least %d", len(o.Token), minTokenLength)
	}
	if o.TLSConfig != nil && len(o.TLSConfig.Certificates) == 0 && o.TLSConfig.GetCertificate == nil && o.TLSConfig.GetConfigForClient == nil {
		return o, errors.New("expose: TLSConfig has no server certificate")
	}
	return o, nil
}

// setProfileRates applies the mutex fraction and the block rate (negative:
// leave alone) and returns a function that undoes it. Block profiling is
// left to the returned sampler unless opts.BlockProfileAlways; the sampler
// is nil when block profiling is always on or left alone. The mutex
// fraction's previous value can be read and is put back; the block rate
// cannot be read, so it is put back to 0, Go's default (off).
func setProfileRates(opts Options) (*blockSampler, func()) {
	prevMutex := -1
	if opts.MutexProfileFraction >= 0 {
		prevMutex = runtime.SetMutexProfileFraction(opts.MutexProfileFraction)
	}
	var sampler *blockSampler
	switch {
	case opts.BlockProfileRate < 0:
	case opts.BlockProfileAlways:
		runtime.SetBlockProfileRate(opts.BlockProfileRate)
	default:
		sampler = &blockSampler{rate: opts.BlockProfileRate}
	}
	return sampler, func() {
		if prevMutex >= 0 {
			runtime.SetMutexProfileFraction(prevMutex)
		}
		if sampler != nil {
			sampler.close()
		} else if opts.BlockProfileRate >= 0 {
			runtime.SetBlockProfileRate(0)
		}
	}
}
