package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Lookups the dashboard server needs beyond the Store interface: one run by
// its id, and a cheap way to know that nothing changed since a cached answer.

// A RunLookup finds single records. The stores Open returns implement it.
type RunLookup interface {
	// ProfileRun returns the index entry of one profiling run, or an
	// error wrapping ErrUnknownRun.
	ProfileRun(ctx context.Context, id string) (ProfileRun, error)
	// BenchVersion returns a value that changes whenever a benchmark run
	// is saved, by this process or any other: answers computed from the
	// benchmark history stay valid while it does not change.
	BenchVersion(ctx context.Context) (Version, error)
	// DeleteProfileRun removes one profiling run from the index, or
	// returns an error wrapping ErrUnknownRun. Its directory is the
	// caller's to remove.
	DeleteProfileRun(ctx context.Context, id string) error
}

// A Version identifies the state of the benchmark history. Runs are never
// updated or deleted, so the number of runs and the highest id together
// change exactly when a run is added: the count alone misses nothing either,
// but the id makes a restore from an older backup look different too.
type Version struct {
	MaxID, Runs int64
}

// ErrUnknownRun is returned by ProfileRun when no run has the id.
var ErrUnknownRun = errors.New("unknown run")

// ProfileRun implements RunLookup.
func (s *sqlStore) ProfileRun(ctx context.Context, id string) (ProfileRun, error) {
	var p ProfileRun
	var start, end int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT id, dir, target, start_time, end_time, commit_hash, dirty, version,
		requests, failures, rps, p50_ms, p99_ms, profiles, load_failed FROM profile_runs WHERE id = ?`), id).
		Scan(&p.ID, &p.Dir, &p.Target, &start, &end, &p.Commit, &p.Dirty, &p.Version,
			&p.Requests, &p.Failures, &p.RPS, &p.P50Ms, &p.P99Ms, &p.ProfileOK, &p.LoadFailed)
	if errors.Is(err, sql.ErrNoRows) {
		return ProfileRun{}, fmt.Errorf("%w %s", ErrUnknownRun, id)
	}
	if err != nil {
		return ProfileRun{}, fmt.Errorf("find profiling run %s: %w", id, err)
	}
	p.Start, p.End = fromNanos(start), fromNanos(end)
	return p, nil
}

// DeleteProfileRun implements RunLookup.
func (s *sqlStore) DeleteProfileRun(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM profile_runs WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("delete profiling run %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("%w %s", ErrUnknownRun, id)
	}
	return nil
}

// BenchVersion implements RunLookup. The highest id alone would not do:
// with PostgreSQL a run with a lower id can commit after one with a higher.
func (s *sqlStore) BenchVersion(ctx context.Context) (Version, error) {
	var v Version
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0), COUNT(*) FROM bench_runs`).Scan(&v.MaxID, &v.Runs); err != nil {
		return Version{}, fmt.Errorf("read history version: %w", err)
	}
	return v, nil
}
