// Package store keeps every benchmark result and profiling run perfscope
// records, per commit, so history can be asked of it later. One Store
// interface has two implementations behind the same tests: an embedded SQLite
// file (the default, nothing to install) and PostgreSQL for teams that share
// one history. All samples are kept, not summaries: statistics are computed
// when read, so a better method later still has the raw data.
package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/run"
)

// A Store records benchmark runs and indexes profiling runs, and answers the
// questions history and the dashboard ask of them. Every write is one
// transaction: a run is stored whole or not at all.
type Store interface {
	// SaveBenchRun stores one benchmark run with all its samples and
	// returns the run's id.
	SaveBenchRun(ctx context.Context, saved BenchRun) (int64, error)
	// SaveProfileRun indexes a saved profiling run by its id; saving the
	// same id again replaces the entry.
	SaveProfileRun(ctx context.Context, saved *run.Run) error

	// Commits lists the commits that have benchmark runs matching f.
	Commits(ctx context.Context, f Filter) ([]Commit, error)
	// Benchmarks lists the benchmarks and their units matching f.
	Benchmarks(ctx context.Context, f Filter) ([]Benchmark, error)
	// Series returns one benchmark's samples in one unit, one point per
	// commit, in the order f asks for.
	Series(ctx context.Context, key SeriesKey, f Filter) ([]SeriesPoint, error)
	// CommitSamples returns every sample recorded for one commit, for
	// comparing two commits. ref is a commit hash or a unique prefix of
	// at least 4 characters, with "+dirty" appended for runs made on a
	// modified work tree (as Commit.Ref prints it).
	CommitSamples(ctx context.Context, ref string, f Filter) (*CommitSamples, error)
	// ProfileRuns lists indexed profiling runs, newest first.
	ProfileRuns(ctx context.Context, f Filter) ([]ProfileRun, error)

	Close() error
}

// A BenchRun is one invocation of the benchmarks: where and on what code they
// ran, and every result line they printed.
type BenchRun struct {
	Commit     string    // full commit hash
	Branch     string    // branch name, "" when detached or unknown
	Dirty      bool      // the work tree had uncommitted changes
	CommitTime time.Time // committer date; zero when unknown
	Time       time.Time // when the benchmarks ran; zero means now
	Machine    Machine
	GoVersion  string
	// Package is the import path used for results that carry no "pkg"
	// configuration of their own.
	Package string
	// Results are the parsed result lines. Each line is one sample per
	// unit; lines with the same package and full name (sub-benchmark and
	// -procs suffix included) are samples of the same benchmark.
	Results []*benchfmt.Result
	// Interrupted marks a run stopped early (Ctrl-C): Results are what
	// it measured until then, not all the benchmarks it was to run.
	Interrupted bool
}

// A Machine identifies where benchmarks ran; results from different
// machines are not comparable.
type Machine struct {
	Hostname string `json:"hostname"`
	GOOS     string `json:"goos"`
	GOARCH   string `json:"goarch"`
	CPU      string `json:"cpu"`
}

// Order is the order of commits in listings and series.
type Order int

const (
	// ByCommitTime orders by committer date, falling back to the time
	// of the run for runs whose commit time is unknown.
	ByCommitTime Order = iota
	// ByInsertion orders by when each commit was first recorded.
	ByInsertion
)

// A Filter narrows a query. Zero fields do not filter.
type Filter struct {
	Branch  string    // runs on this branch
	Machine string    // runs on this hostname
	Since   time.Time // commits (or runs, when the commit time is unknown) at or after
	Package string    // regular expression matched against import paths
	Name    string    // regular expression matched against full benchmark names
	Unit    string    // exact unit, such as "sec/op"
	Order   Order
	Limit   int // at most this many commits or profile runs, the latest ones
}

// A Commit is one commit with benchmark runs. Runs on a modified work tree
// are a separate Commit with Dirty set: they measure code no commit holds.
type Commit struct {
	Hash     string    `json:"commit"`
	Dirty    bool      `json:"dirty"`
	Branch   string    `json:"branch"`      // branch of its first run
	Time     time.Time `json:"commit_time"` // committer date, or the first run's time when unknown
	FirstRun time.Time `json:"first_run"`
	LastRun  time.Time `json:"last_run"`
	Runs     int       `json:"runs"`
	// Interrupted counts the runs that were stopped early (Ctrl-C):
	// their samples are those measured until then, and benchmarks they
	// had not reached have none from them.
	Interrupted int      `json:"interrupted_runs,omitempty"`
	Machines    []string `json:"machines"` // hostnames of its runs
}

// Ref returns the commit as CommitSamples accepts it.
func (c Commit) Ref() string {
	if c.Dirty {
		return c.Hash + dirtySuffix
	}
	return c.Hash
}

const dirtySuffix = gitstate.DirtySuffix

// A Benchmark is one benchmark of one package and the units it reports.
type Benchmark struct {
	Package string   `json:"package"`
	Name    string   `json:"name"`
	Units   []string `json:"units"`
}

// A SeriesKey names one benchmark metric.
type SeriesKey struct {
	Package string `json:"package"`
	Name    string `json:"name"`
	Unit    string `json:"unit"`
}

// A SeriesPoint is one commit's samples of one benchmark metric, merged over
// all its runs that match the filter.
type SeriesPoint struct {
	Commit
	RunIDs []int64   `json:"run_ids"`
	Values []float64 `json:"values"`
}

// CommitSamples are all samples recorded for one commit.
type CommitSamples struct {
	Commit Commit `json:"commit"`
	// Config is the benchmark configuration (goos, goarch, cpu, go) that
	// all the runs share, as their output files said it; a key on which
	// runs differ is left out.
	Config  []ConfigValue   `json:"config,omitempty"`
	Samples []SeriesSamples `json:"samples"`
}

// A ConfigValue is one "key: value" configuration line of benchmark output.
type ConfigValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// SeriesSamples are the samples of one benchmark metric.
type SeriesSamples struct {
	SeriesKey
	Values []float64 `json:"values"`
}

// A ProfileRun is the index entry of a saved profiling run; the profiles
// themselves stay in Dir.
type ProfileRun struct {
	ID        string    `json:"id"`
	Dir       string    `json:"dir"`
	Target    string    `json:"target"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Commit    string    `json:"git_commit,omitempty"`
	Dirty     bool      `json:"git_dirty,omitempty"`
	Version   string    `json:"perfscope_version"`
	Requests  int64     `json:"requests"`
	Failures  int64     `json:"failures"`
	RPS       float64   `json:"throughput_rps"`
	P50Ms     float64   `json:"p50_ms"`
	P99Ms     float64   `json:"p99_ms"`
	ProfileOK int       `json:"profiles"` // profiles saved without error
	// LoadFailed is the load's verdict (loadgen.Health.Failed), judged
	// by the threshold the run was made with.
	LoadFailed bool `json:"load_failed"`
}

// ErrNoDatabase is returned by OpenExisting and OpenReadOnly when the store
// does not exist yet.
var ErrNoDatabase = errors.New("no perfscope store")

// ErrNotStore is returned by OpenExisting and OpenReadOnly for a file that is
// not a perfscope store: empty, not a SQLite database, or another program's.
var ErrNotStore = errors.New("not a perfscope store")

// ErrUnknownCommit is returned by CommitSamples when no run matches the ref.
var ErrUnknownCommit = errors.New("unknown commit")

// DefaultPath returns where the embedded database lives unless --db says
// otherwise: ~/.perfscope/perfscope.db.
func DefaultPath() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locate default database: %w (pass --db PATH)", err)
	}
	return filepath.Join(home, ".perfscope", "perfscope.db"), nil
}

// IsPostgres reports whether dsn selects PostgreSQL rather than a SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens the store dsn names, creating it and bringing its schema up to
// date as needed: "" for the default SQLite file, a postgres:// or
// postgresql:// URL for PostgreSQL, anything else is the path of a SQLite file.
func Open(ctx context.Context, dsn string) (Store, error) {
	return open(ctx, dsn, createStore)
}

// OpenExisting is Open for commands that change a store but must not create
// one: a store that does not exist is ErrNoDatabase, a file that is not one
// ErrNotStore, and neither is written to.
func OpenExisting(ctx context.Context, dsn string) (Store, error) {
	return open(ctx, dsn, existingStore)
}

// OpenReadOnly is OpenExisting for commands that only read: a SQLite file is
// opened read-only. The one write it may make is the one every command
// makes to a store an older perfscope wrote: bringing its schema up to date.
func OpenReadOnly(ctx context.Context, dsn string) (Store, error) {
	return open(ctx, dsn, readOnly)
}

// openMode says what opening a store may do to it.
type openMode int

const (
	createStore   openMode = iota // create the store when it does not exist
	existingStore                 // the store must exist; it may be written
	readOnly                      // the store must exist; it is only read
)

func open(ctx context.Context, dsn string, mode openMode) (Store, error) {
	if IsPostgres(dsn) {
		return openPostgres(ctx, dsn, mode)
	}
	path := dsn
	if path == "" {
		p, err := DefaultPath()
		if err != nil {
			return nil, err
		}
		path = p
		if mode == createStore {
			// Only the default location is created: a mistyped --db
			// directory should fail, not appear.
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
			}
		}
	} else if strings.HasPrefix(path, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("expand %s: %w", path, err)
		}
		path = filepath.Join(home, path[2:])
	}
	return openSQLite(ctx, path, mode)
}
