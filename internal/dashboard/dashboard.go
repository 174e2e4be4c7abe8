package dashboard

import (
	"context"
	"time"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report/web"
	"github.com/perfscope/perfscope/internal/scrape"
	"github.com/perfscope/perfscope/internal/store"
)

// A Store is what the dashboard reads: of each kind of data, the methods
// its pages and read endpoints call. The store that store.Open returns
// implements it.
type Store interface {
	benchHistory
	runIndex
	profileSeries
}

// benchHistory is what the dashboard reads of the benchmark history.
type benchHistory interface {
	Commits(ctx context.Context, f store.Filter) ([]store.Commit, error)
	Benchmarks(ctx context.Context, f store.Filter) ([]store.Benchmark, error)
	Series(ctx context.Context, key store.SeriesKey, f store.Filter) ([]store.SeriesPoint, error)
	CommitSamples(ctx context.Context, ref string, f store.Filter) (*store.CommitSamples, error)
	gate.RecordedProfiles
	BenchVersion(ctx context.Context) (store.Version, error)
}

// runIndex is what the dashboard reads of the index of profiling runs.
type runIndex interface {
	ProfileRuns(ctx context.Context, f store.RunFilter) ([]store.ProfileRun, error)
	ProfileRun(ctx context.Context, id string) (store.ProfileRun, error)
}

// profileSeries is what the dashboard reads of the profiles 'perfscope
// scrape' stores: ranges merged, ranked and compared, leaks and deploys,
// and resources over time.
type profileSeries interface {
	analysis.SeriesReader
	profseries.SeriesReader
	ProfileTargets(ctx context.Context, typ string, sel profseries.Selector) ([]store.ProfileTarget, error)
	SeriesSpans(ctx context.Context, typ string, sel profseries.Selector) ([]profseries.Span, error)
	Merge(ctx context.Context, q profseries.Query) (*store.Merged, error)
	Top(ctx context.Context, q profseries.Query, order profiles.Order, n int) (*profiles.FuncTable, error)
	FunctionSeries(ctx context.Context, q profseries.Query, function string, step time.Duration) ([]profseries.FunctionPoint, error)
	Diff(ctx context.Context, base, head profseries.Query) (*profseries.RangeDiff, error)
	GaugeSeries(ctx context.Context, g profseries.Gauge, sel profseries.Selector, from, to time.Time, step time.Duration) ([]profseries.GaugePoint, error)
	GaugeSeriesBy(ctx context.Context, g profseries.Gauge, sel profseries.Selector, from, to time.Time, step time.Duration, group func(profseries.Labels) string) (map[string][]profseries.GaugePoint, error)
}

// Scraper is what the dashboard shows of a scraper running beside it
// (serve --scrape): its targets' health.
type Scraper interface {
	Targets() []scrape.Health
}

// Config configures a Dashboard.
type Config struct {
	// Store is read for everything shown. Required.
	Store Store
	// Analyses runs the analyses of runs and of scraped ranges, within
	// its slots; the server shares it with its uploads and pprof views.
	// Required.
	Analyses *analysis.Shared
	// ProfileLimits bound reading one profile of a stored run; zero
	// fields are fetch's defaults.
	ProfileLimits fetch.Limits
	// SourceDir and NoCompiler are the analyses' source, as the server's
	// Config says.
	SourceDir  string
	NoCompiler bool
	// Scraper, when set, is the scraper running beside the dashboard.
	Scraper Scraper
	// Wait is how long a page waits for a run's analysis before saying
	// it is under way.
	Wait time.Duration
}

// A Dashboard composes the dashboard's pages and the answers of its read
// endpoints. Create it with New; it is safe for concurrent use.
type Dashboard struct {
	cfg   Config
	cache *web.ChangesCache
	menus filterMenus
}

// New returns a Dashboard reading cfg.Store.
func New(cfg Config) *Dashboard {
	return &Dashboard{cfg: cfg, cache: web.NewChangesCache(web.CacheCommits)}
}

// BenchChanged forgets what was computed of the benchmark history, after
// a benchmark run was stored. (Entries are keyed by the store's version
// too: this only frees their memory sooner.)
func (d *Dashboard) BenchChanged() { d.cache.Invalidate() }
