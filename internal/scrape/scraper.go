package scrape

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/profseries"
)

// A Sink takes the scrapes collected: the profile-series store, or
// anything that keeps them. Append is called from many targets at once.
type Sink interface {
	Append(ctx context.Context, s *profseries.Scrape) error
}

// Defaults of Options.
const (
	DefaultMaxWindowed = 4096
	DefaultMaxQuick    = 32
	DefaultMaxBackoff  = 5 * time.Minute
	DefaultMaxQueued   = 256
)

// DefaultLimits bound each profile a scraper reads: a quarter of fetch's
// defaults, still several times a busy service's profiles, since a
// scraper reads many at once.
var DefaultLimits = fetch.Limits{MaxBytes: 16 << 20, MaxSamples: 250_000, MaxLocations: 250_000, MaxMemory: 128 << 20}

// Options tune a Scraper. Zero values mean the documented defaults.
type Options struct {
	// Shard selects the targets this scraper keeps. Default: all.
	Shard Shard
	// MaxWindowed bounds the requests that wait out a window (CPU
	// profiles, deltas made by the target) in flight at once. Each holds
	// a connection for the whole interval, so the bound is counted apart
	// from quick requests; a scraper of T targets needs up to T × (1 + the
	// delta types) of them. Default DefaultMaxWindowed.
	MaxWindowed int
	// MaxQuick bounds the snapshot requests (goroutine, heap, and
	// cumulative profiles of targets that make no deltas) in flight at
	// once: they answer at once and cost parsing. Default DefaultMaxQuick.
	MaxQuick int
	// MaxBackoff caps the wait after failed scrapes (never under the
	// interval). Default DefaultMaxBackoff.
	MaxBackoff time.Duration
	// Limits bound each profile read. Default DefaultLimits.
	Limits fetch.Limits
	// MaxQueued bounds the profiles collected and waiting for the sink.
	// Targets never wait for the sink: when this many wait, a target's
	// next profile is dropped and its health says so (Health.Dropped).
	// Default DefaultMaxQueued: a second of 500 targets' scrapes, which
	// rides out a slow commit; a store slower than the scrapes for longer
	// loses profiles rather than the scraper's memory (a queued CPU
	// profile of a busy service is a few hundred KB parsed).
	MaxQueued int
}

func (o Options) withDefaults() Options {
	if o.MaxWindowed <= 0 {
		o.MaxWindowed = DefaultMaxWindowed
	}
	if o.MaxQuick <= 0 {
		o.MaxQuick = DefaultMaxQuick
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = DefaultMaxQueued
	}
	if o.Limits == (fetch.Limits{}) {
		o.Limits = DefaultLimits
	}
	return o
}

// A Scraper scrapes the targets of a configuration, each on its own
// schedule, and hands what it collects to a Sink. It is safe for
// concurrent use: Targets and Reload may be called while it runs.
type Scraper struct {
	sink     Sink
	opts     Options
	windowed chan struct{}
	quick    chan struct{}

	mu        sync.Mutex
	cfg       *Config
	ctx       context.Context // set while Run runs
	writer    *writer         // set while Run runs
	writers   int             // how many Appends at once: storeWriters
	discovery []*fileDiscovery
	stopDisc  context.CancelFunc
	loops     map[string]*loop
	// final is every target's health when Run last returned.
	final   []Health
	clients map[*Job]*http.Client
	wg      sync.WaitGroup
}

// New returns a scraper of cfg's targets, writing to sink. It scrapes
// nothing until Run.
func New(cfg *Config, sink Sink, opts Options) *Scraper {
	opts = opts.withDefaults()
	return &Scraper{
		sink:     sink,
		opts:     opts,
		windowed: make(chan struct{}, opts.MaxWindowed),
		quick:    make(chan struct{}, opts.MaxQuick),
		cfg:      cfg,
		loops:    map[string]*loop{},
		writers:  storeWriters,
	}
}

// Run scrapes until ctx is done, then stops every target and returns
// once no scrape is in flight and every profile collected is stored.
func (s *Scraper) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.ctx != nil {
		s.mu.Unlock()
		return errors.New("scraper already running")
	}
	s.ctx = ctx
	s.writer = startWriter(s.sink, s.writers, s.opts.MaxQueued)
	s.startDiscovery()
	s.syncTargets()
	s.mu.Unlock()

	<-ctx.Done()

	s.mu.Lock()
	s.stopDisc()
	stopped := make([]*loop, 0, len(s.loops))
	for k, l := range s.loops {
		l.cancel()
		delete(s.loops, k)
		stopped = append(stopped, l)
	}
	s.mu.Unlock()
	s.wg.Wait()
	// What was collected is stored before Run returns.
	s.writer.stop()
	final := targetHealth(stopped)
	s.mu.Lock()
	for _, c := range s.clients {
		c.CloseIdleConnections()
	}
	s.ctx = nil
	s.final = final
	s.mu.Unlock()
	return nil
}

// Config returns the configuration in force.
func (s *Scraper) Config() *Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// Reload reads the configuration at path and, when it is valid, scrapes
// by it from now on: targets it keeps keep their state and schedule,
// targets it drops stop, new ones start. An invalid file changes
// nothing; the error says why, in one line.
func (s *Scraper) Reload(path string) error {
	cfg, err := LoadConfig(path)
	if err != nil {
		return err
	}
	s.Apply(cfg)
	return nil
}

// Apply scrapes by cfg, a validated configuration, from now on.
func (s *Scraper) Apply(cfg *Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = cfg
	if s.ctx == nil {
		return
	}
	s.stopDisc()
	s.startDiscovery()
	s.syncTargets()
}

// startDiscovery starts file discovery of the configuration; s.mu held.
func (s *Scraper) startDiscovery() {
	ctx, cancel := context.WithCancel(s.ctx)
	s.stopDisc = cancel
	s.discovery = nil
	for _, j := range s.cfg.ScrapeConfigs {
		for _, fc := range j.FileSDConfigs {
			fd := newFileDiscovery(j, fc, s.discovered)
			s.discovery = append(s.discovery, fd)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				fd.run(ctx)
			}()
		}
	}
}

// discovered is called by file discovery when a file's targets changed.
func (s *Scraper) discovered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx != nil && s.ctx.Err() == nil {
		s.syncTargets()
	}
}

// targetsNow lists the targets of the configuration and discovery that
// this shard keeps, each label set once; s.mu held.
func (s *Scraper) targetsNow() []Target {
	var all []Target
	for _, j := range s.cfg.ScrapeConfigs {
		for _, g := range j.StaticConfigs {
			all = append(all, groupTargets(j, g)...)
		}
	}
	for _, fd := range s.discovery {
		all = append(all, fd.targets()...)
	}
	seen := map[string]bool{}
	var kept []Target
	for _, t := range all {
		id := t.Labels.String()
		if seen[id] || !s.opts.Shard.Keeps(t) {
			continue
		}
		seen[id] = true
		kept = append(kept, t)
	}
	return kept
}

// syncTargets starts the targets that are new, stops those gone; s.mu
// held.
func (s *Scraper) syncTargets() {
	want := map[string]Target{}
	for _, t := range s.targetsNow() {
		want[t.key()] = t
	}
	for k, l := range s.loops {
		if _, ok := want[k]; !ok {
			l.cancel()
			delete(s.loops, k)
		}
	}
	clients := map[*Job]*http.Client{}
	for k, t := range want {
		if _, ok := s.loops[k]; ok {
			continue
		}
		c := clients[t.Job]
		if c == nil {
			c = s.clients[t.Job]
		}
		if c == nil {
			c = newClient(t.Job.TLS)
		}
		clients[t.Job] = c
		l, err := newLoop(s, t, c)
		if err != nil {
			continue // URLs come from validated host:port targets
		}
		s.loops[k] = l
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			l.run()
		}()
	}
	for _, l := range s.loops {
		clients[l.target.Job] = l.client
	}
	for j, c := range s.clients {
		if _, ok := clients[j]; !ok {
			c.CloseIdleConnections()
		}
	}
	s.clients = clients
}

// Targets returns the health of every target scraped now, ordered by
// job and labels; once Run has returned, as they were when it stopped.
func (s *Scraper) Targets() []Health {
	s.mu.Lock()
	if s.ctx == nil && s.final != nil {
		defer s.mu.Unlock()
		return slices.Clone(s.final)
	}
	loops := make([]*loop, 0, len(s.loops))
	for _, l := range s.loops {
		loops = append(loops, l)
	}
	s.mu.Unlock()
	return targetHealth(loops)
}

// targetHealth is the health of loops, by job and labels.
func targetHealth(loops []*loop) []Health {
	out := make([]Health, 0, len(loops))
	for _, l := range loops {
		out = append(out, l.health())
	}
	slices.SortFunc(out, func(a, b Health) int {
		if c := strings.Compare(a.Job, b.Job); c != 0 {
			return c
		}
		return strings.Compare(a.Labels.String(), b.Labels.String())
	})
	return out
}

// Discovery returns what file discovery made of each target file.
func (s *Scraper) Discovery() []FileStatus {
	s.mu.Lock()
	ds := slices.Clone(s.discovery)
	s.mu.Unlock()
	var out []FileStatus
	for _, fd := range ds {
		out = append(out, fd.status()...)
	}
	return out
}

// newClient is the client of one job's targets: one transport, so
// targets share connections' setup; never through a proxy (pprof
// endpoints are internal); TLS as the job says. Its transport counts the
// bytes each scrape receives.
func newClient(cfg *tls.Config) *http.Client {
	return &http.Client{
		Transport: countingTransport{&http.Transport{
			Proxy:               nil,
			MaxIdleConnsPerHost: 8,
			TLSClientConfig:     cfg,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true, // pprof bodies are gzipped already; count what is sent
		}},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}
}

// A countingTransport adds the bytes of each answer's body to the
// counter the request's context carries (withByteCounter), so a scrape
// knows the raw size of what it received.
type countingTransport struct {
	*http.Transport
}

type byteCounterKey struct{}

func withByteCounter(ctx context.Context, n *atomic.Int64) context.Context {
	return context.WithValue(ctx, byteCounterKey{}, n)
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.Transport.RoundTrip(req)
	if n, ok := req.Context().Value(byteCounterKey{}).(*atomic.Int64); ok && err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// acquire takes a slot of sem, or gives up when ctx is done.
func acquire(ctx context.Context, sem chan struct{}) error {
	select {
	case sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
