package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/gitstate"
)

// A BenchHistory records benchmark runs and answers the questions history,
// compare and the dashboard ask of them. It is one of the kinds of data a DB
// keeps.
type BenchHistory struct{ b *sqlDB }

// ErrUnknownCommit is returned by CommitSamples when no run matches the ref.
var ErrUnknownCommit = errors.New("unknown commit")

// A Version identifies the state of the benchmark history. Runs are never
// updated or deleted, so the number of runs and the highest id together
// change exactly when a run is added: the count alone misses nothing either,
// but the id makes a restore from an older backup look different too.
type Version struct {
	MaxID, Runs int64
}

// BenchVersion returns a value that changes whenever a benchmark run is
// saved, by this process or any other: answers computed from the benchmark
// history stay valid while it does not change. The highest id alone would
// not do: with PostgreSQL a run with a lower id can commit after one with a
// higher.
func (h *BenchHistory) BenchVersion(ctx context.Context) (Version, error) {
	var v Version
	if err := h.b.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0), COUNT(*) FROM bench_runs`).Scan(&v.MaxID, &v.Runs); err != nil {
		return Version{}, fmt.Errorf("read history version: %w", err)
	}
	return v, nil
}

// A BenchRun is one invocation of the benchmarks: where and on what code they
// ran, and every result line they printed.
type BenchRun struct {
	Commit     string    // full commit hash
	Branch     string    // branch name, "" when detached or unknown
	Dirty      bool      // the work tree had uncommitted changes
	CommitTime time.Time // committer date; zero when unknown
	// Subject is the first line of the commit's message and Author its
	// author's name; "" when unknown. They are stored as
	// gitstate.OneLine keeps them.
	Subject, Author string
	Time            time.Time // when the benchmarks ran; zero means now
	Machine         Machine
	GoVersion       string
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
	// InstructionProfiles are the per-operation instruction profiles of
	// the benchmarks whose instructions were counted, one per benchmark
	// (RunID is ignored).
	InstructionProfiles []InstructionProfile
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

// A Filter narrows a query of the benchmark history. Zero fields do not
// filter.
type Filter struct {
	Branch  string    // runs on this branch
	Machine string    // runs on this hostname
	Since   time.Time // commits (or runs, when the commit time is unknown) at or after
	Package string    // regular expression matched against import paths
	Name    string    // regular expression matched against full benchmark names
	Unit    string    // exact unit, such as "sec/op"
	Order   Order
	Limit   int // at most this many commits, the latest ones in Order
}

// A Commit is one commit with benchmark runs. Runs on a modified work tree
// are a separate Commit with Dirty set: they measure code no commit holds.
type Commit struct {
	Hash   string `json:"commit"`
	Dirty  bool   `json:"dirty"`
	Branch string `json:"branch"` // branch of its first run
	// Subject is the first line of the commit's message and Author its
	// author's name, from the first of its runs that knows them; "" when
	// none does (runs recorded without them, by older versions too).
	Subject  string    `json:"subject,omitempty"`
	Author   string    `json:"author,omitempty"`
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
