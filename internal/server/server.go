package server

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/httpmetrics"
	"github.com/perfscope/perfscope/internal/pprofweb"
	"github.com/perfscope/perfscope/internal/run"
	"github.com/perfscope/perfscope/internal/runupload"
	"github.com/perfscope/perfscope/internal/store"
)

// Defaults of Config.
const (
	// DefaultMaxUpload bounds one upload's body. A profiling run of six
	// profiles is a few MiB; a benchmark file of 200 benchmarks × 10
	// samples is under 1 MiB.
	DefaultMaxUpload = 64 << 20
	// DefaultRequestTimeout bounds the work of one request.
	DefaultRequestTimeout = 60 * time.Second
	// DefaultAnalysisTimeout bounds the analysis of one run, waiting
	// for its turn included.
	DefaultAnalysisTimeout = 3 * time.Minute
)

// A Backend is the store the server reads and writes: what the dashboard
// reads, and the writes and token checks the server makes itself. The
// store that store.Open returns implements it.
type Backend interface {
	dashboard.Store
	SaveBenchRun(ctx context.Context, saved store.BenchRun) (int64, error)
	SaveProfileRun(ctx context.Context, saved *run.Run) error
	DeleteProfileRun(ctx context.Context, id string) error
	tokenChecker
}

// tokenChecker checks the API tokens requests carry; tokens are made and
// revoked by 'perfscope token', not by the server.
type tokenChecker interface {
	VerifyToken(ctx context.Context, secret string) (store.Token, error)
}

// Config configures a Server. Zero values mean the documented defaults.
type Config struct {
	// Store holds benchmark history, the index of profiling runs and the
	// API tokens.
	Store Backend
	// DataDir is where uploaded profiling runs are kept, one directory
	// per run. Required.
	DataDir string
	// PublicRead lets clients that are not on loopback read without a
	// token. Writes always need one.
	PublicRead bool
	// MaxUpload bounds an upload's body in bytes; larger uploads get 413.
	// Default DefaultMaxUpload.
	MaxUpload int64
	// RequestTimeout bounds each request's work; default
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// ProfileLimits bound what reading one profile of a run may cost,
	// at upload and whenever a page reads it; zero fields are fetch's
	// defaults. A stored run with a profile beyond them is listed and
	// its page says which profile is too large.
	ProfileLimits fetch.Limits
	// AnalysisTimeout bounds the analysis of one run; default
	// DefaultAnalysisTimeout. A page waits for an analysis a few
	// seconds at most and says it is under way when it is not done.
	AnalysisTimeout time.Duration
	// AnalysisSlots is how many analyses run at once, and how many
	// profiles are read at once besides (an upload's check, a pprof view
	// being built); default half the CPUs, at least one, so that the
	// pages of everyone else stay responsive and memory stays bounded.
	AnalysisSlots int
	// SourceDir is a checkout of the profiled services' source, for the
	// compiler's reasons in findings, as 'perfscope report --source-dir',
	// and the only directory whose files the pages show (findings'
	// source lines, pprof's source view): never a file at a path an
	// uploaded profile names. Default: the compiler's reasons come from
	// the current module, as for the CLI, and the pages show no source.
	SourceDir string
	// NoCompiler skips building the source for the compiler's reasons.
	// Run pages then say so; findings that rest on those reasons (fmt
	// arguments boxed at the call) may show smaller shares than the
	// CLI's.
	NoCompiler bool
	// Scraper, when set, is the scraper running beside the server
	// (serve --scrape): its targets' health is served.
	Scraper Scraper
	// Version is perfscope's version, shown in page footers.
	Version string
	// Logf receives one line per failed request and server event; nil
	// discards them.
	Logf func(format string, args ...any)
}

// A Server serves the API and the dashboard. Create it with New.
type Server struct {
	cfg      Config
	mux      *http.ServeMux
	metrics  *httpmetrics.Registry
	dash     *dashboard.Dashboard
	pprof    *pprofweb.UIs
	pages    *pages
	analyses *analysis.Shared
	// runMu serialises the check-move-index of run uploads, so two
	// uploads of the same id cannot both pass the check.
	runMu sync.Mutex
}

// New checks cfg, creates the data directory and returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: no store")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("server: no data directory for uploaded runs")
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.AnalysisTimeout <= 0 {
		cfg.AnalysisTimeout = DefaultAnalysisTimeout
	}
	if cfg.AnalysisSlots <= 0 {
		cfg.AnalysisSlots = max(1, runtime.NumCPU()/2)
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", cfg.DataDir, err)
	}
	cfg.DataDir = abs
	// Uploads cut short by a previous crash were never acknowledged.
	if err := runupload.ResetIncoming(cfg.DataDir); err != nil {
		return nil, err
	}
	pg, err := newPages(cfg.Version)
	if err != nil {
		return nil, err
	}
	analyses := analysis.NewShared(analysis.SharedConfig{Slots: cfg.AnalysisSlots, Timeout: cfg.AnalysisTimeout, Source: analysis.Source{Dir: cfg.SourceDir, Confined: true}, NoCompiler: cfg.NoCompiler})
	s := &Server{
		cfg:     cfg,
		mux:     http.NewServeMux(),
		metrics: httpmetrics.New(),
		dash: dashboard.New(dashboard.Config{Store: cfg.Store, Analyses: analyses, ProfileLimits: cfg.ProfileLimits,
			SourceDir: cfg.SourceDir, NoCompiler: cfg.NoCompiler, Scraper: cfg.Scraper,
			// A page waits for an analysis most of the request's time.
			Wait: cfg.RequestTimeout * 3 / 4}),
		pprof:    pprofweb.New(pprofweb.Config{Max: 16, SourceDir: cfg.SourceDir}),
		pages:    pg,
		analyses: analyses,
	}
	s.routes()
	return s, nil
}

// routes registers every endpoint. Each handler's doc comment lists its
// query parameters.
func (s *Server) routes() {
	read, write := s.readAccess, s.writeAccess
	api := func(pattern string, access func(http.Handler) http.Handler, h http.HandlerFunc) {
		s.mux.Handle(pattern, access(h))
	}
	api("POST /api/v1/bench", write, s.handleUploadBench)
	api("POST /api/v1/runs", write, s.handleUploadRun)
	api("GET /api/v1/commits", read, s.handleCommits)
	api("GET /api/v1/commits/{ref}", read, s.handleCommit)
	api("GET /api/v1/benchmarks", read, s.handleBenchmarks)
	api("GET /api/v1/series", read, s.handleSeries)
	api("GET /api/v1/compare", read, s.handleCompare)
	api("GET /api/v1/runs", read, s.handleRuns)
	api("GET /api/v1/runs/{id}", read, s.handleRun)
	api("DELETE /api/v1/runs/{id}", write, s.handleDeleteRun)
	api("GET /api/v1/runs/{id}/report", read, s.handleRunReport)
	api("GET /api/v1/runs/{id}/profiles/{kind}", read, s.handleProfile)
	api("GET /api/v1/profiles/targets", read, s.handleProfileTargets)
	api("GET /api/v1/profiles/merge", read, s.handleProfileMerge)
	api("GET /api/v1/profiles/top", read, s.handleProfileTop)
	api("GET /api/v1/profiles/function", read, s.handleProfileFunction)
	api("GET /api/v1/profiles/diff", read, s.handleProfileDiff)
	api("GET /api/v1/profiles/findings", read, s.handleProfileFindings)
	api("GET /api/v1/profiles/leaks", read, s.handleProfileLeaks)
	api("GET /api/v1/profiles/deploys", read, s.handleProfileDeploys)
	api("GET /api/v1/scrape/targets", read, s.handleScrapeTargets)
	api("/api/", read, s.handleAPINotFound)

	s.mux.Handle("GET /metrics", s.metrics)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})

	page := func(pattern string, h http.HandlerFunc) { s.mux.Handle(pattern, read(h)) }
	page("GET /{$}", s.pageHome)
	page("GET /benchmarks", s.pageBenchmarks)
	page("GET /trend", s.pageTrend)
	page("GET /compare", s.pageCompare)
	page("GET /runs", s.pageRuns)
	page("GET /runs/{id}", s.pageRun)
	page("GET /leaks", s.pageLeaks)
	page("GET /deploys", s.pageDeploys)
	page("GET /runs/{id}/pprof/{kind}", s.pageRunPprof)
	page("GET /runs/{id}/pprof/{kind}/{view...}", s.pageRunPprof)
	page("GET /diff/{base}/{head}/{kind}", s.pageDiffPprof)
	page("GET /diff/{base}/{head}/{kind}/{view...}", s.pageDiffPprof)
	page("GET /compare/instructions/{base}/{head}/{package}/{name}", s.pageInstructionDiff)
	page("GET /compare/instructions/{base}/{head}/{package}/{name}/{view...}", s.pageInstructionDiff)
	page("GET /services", s.pageServices)
	page("GET /services/view", s.pageService)
	page("GET /services/pprof/{view...}", s.pageServicePprof)
	page("GET /static/{file}", s.pages.static)
	page("/", s.pageNotFound)
}

// Handler returns the server's handler: every route, with the browser's
// security headers, metrics, request timeouts and panic recovery around it,
// and /metrics read as the pages are.
func (s *Server) Handler() http.Handler {
	return secure(s.instrument(s.readMetrics(s.mux)))
}

// Serve serves on ln until ctx is done, then shuts down gracefully: requests
// in flight, uploads included, are given a few seconds to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		// Uploads are read within the request timeout plus the
		// time a slow CI link needs for the largest body.
		ReadTimeout:  s.cfg.RequestTimeout + 2*time.Minute,
		WriteTimeout: s.cfg.RequestTimeout + 30*time.Second,
		IdleTimeout:  2 * time.Minute,
		// net/http's own complaints (a client that sent garbage, a
		// connection reset) go where the server's other messages go.
		ErrorLog: log.New(logWriter(s.cfg.Logf), "", 0),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	go func() {
		if err := s.dash.AnalyseLatest(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logf("%v", err)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		hs.Close()
		return fmt.Errorf("shut down: %w", err)
	}
	<-errc
	return nil
}

// logWriter turns a Logf into the io.Writer a log.Logger writes lines to.
type logWriter func(format string, args ...any)

func (f logWriter) Write(p []byte) (int, error) {
	f("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
