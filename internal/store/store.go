// Package store keeps what perfscope records, split by kind of data, so that
// each caller depends on the few methods it uses and a new kind lands beside
// the others without reshaping them. The kinds are:
//
//   - BenchHistory: benchmark runs and every sample they measured, per commit,
//     so history can be asked of them later (Commits, Benchmarks, Series,
//     CommitSamples). All samples are kept, not summaries: statistics are
//     computed when read, so a better method later still has the raw data.
//   - RunIndex: the index of saved profiling runs (the profiles stay in each
//     run's directory): save, list the newest runs matching a RunFilter a page
//     at a time, look one up, delete one.
//   - TokenStore: the dashboard server's API tokens, kept as hashes.
//
// The kinds are types of this one package rather than packages of their own
// because they are one database: one connection, one dialect, and one
// sequence of schema migrations recorded in one schema_version table, so a
// store is created, checked and upgraded as a whole by every command,
// read-only opens included. Each kind is a small type over the shared SQL backend
// (sqlDB: the connection and the dialect), whose queries are written once for
// both engines: an embedded SQLite file (the default, nothing to install) and
// PostgreSQL for teams that share one history. Open returns a DB, which holds
// every kind and promotes their methods (so no two kinds share a method
// name); callers do not name the kinds' types but declare, where they use
// them, interfaces of the methods they call (history.Source, server.Backend),
// which a DB satisfies.
//
// Filters are applied in SQL, in one place per kind (filterRuns for
// benchmark runs, RunFilter.conds for profiling runs), with limits and paging
// in the query: no read loads every run to filter or count it in memory. The
// one thing SQL does not decide is the match of benchmark and package names
// against Filter's regular expressions: they are Go's (RE2) syntax, which
// neither engine speaks, and they are matched against the distinct names SQL
// returns, never against runs or samples.
//
// # Profile series
//
// ProfileSeries, the fourth kind, keeps the profiles of live targets over
// time; the scraper calls Append, the CLI and dashboard the reads, each
// declaring its own interface of them:
//
//	db.Append(ctx, *profseries.Scrape)                  one scrape, all or nothing; Appends at once share a commit
//	db.MergedProfile(ctx, profseries.Query{Type, Selector, From, To})
//	db.Top(ctx, q, profiles.ByFlat, n)                  the function table of the merge
//	db.FunctionSeries(ctx, q, function, step)           one function's share per step
//	db.Diff(ctx, base, head)                            two ranges, in shares
//	db.ProfileTargets(ctx, type, selector)              series stored, first and last time
//	db.ApplyRetention(ctx, now)                         compaction, retention, budget
//
// The computation (interning, the block format, merge, top, series, diff)
// is package profseries'; this kind only stores and reads:
//
//   - A series is one target's label set and one profile type
//     (prof_series). Functions, mappings, locations, callers (a tree of
//     the locations stacks share), stacks (a caller, a leaf location and
//     a label set, itself a stack) and shapes (sample types and header)
//     are stored once each, keyed by content hash and numbered densely, so
//     a block refers to small ids. A scrape is one row of prof_blocks: its window,
//     process and shape, and its samples as one compressed columnar block.
//     Once an hour of a series is past, retention moves its scrapes' blocks
//     into one pack (prof_packs, compressed together: about half the
//     bytes) and leaves in each block a reference to its entry; a read
//     decodes a pack once, and the packs decoded are kept in memory for
//     the reads after, up to 128 MiB (profileseries_pack.go).
//   - A merge over a range keeps in memory, up to 256 MiB, the merge of
//     each whole bucket it read (an hour, ten minutes) across the series
//     it chose, under what the records of the bucket's scrapes say
//     (profileseries_buckets.go): on a live store, where every scrape
//     changes the range, the next merge of a range like it reads only
//     the buckets that changed and its edges.
//     Selectors are matched in Go against the series' labels (few rows;
//     regular expressions neither engine speaks), time ranges in SQL.
//   - Retention (Retention, DefaultRetention: raw 3 days, one-minute
//     windows to 15 days, ten-minute windows to 60 days, 8 GiB) merges
//     old scrapes into coarser windows with profseries.Merge, per series,
//     in one transaction each, and deletes what is older, oldest hour first
//     while over the budget. On PostgreSQL prof_blocks is partitioned by
//     day of start time: Append creates today's and tomorrow's partition,
//     retention drops whole partitions. On SQLite the primary key (series,
//     resolution, start) keeps a series' blocks in time order, so
//     compaction and retention delete key ranges, and SQLite reuses the
//     freed pages without VACUUM: the file stops growing once retention
//     deletes as much as arrives (TestProfileSeriesMonth).
//   - Symbols no block refers to are collected: a stack's last_seen is the
//     start of the newest scrape that used it, blocks go oldest first, so
//     stacks last seen before the oldest block go (but for the label sets
//     of those kept), then the callers, locations, functions and mappings
//     no remaining stack names, directly or through its callers. Collection bumps
//     an epoch that makes every writer drop the ids it remembers, and on
//     PostgreSQL excludes writers with an advisory lock.
//   - Judgements of deploys whose sides are stored for good are kept
//     (prof_deploys, profileseries_deploys.go), so a deploy is judged once
//     whatever process asks; retention forgets them with the scrapes
//     before them.
//
// Writes are one transaction each: a run is stored whole or not at all.
package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A DB is an open store: every kind of data it keeps, over one connection.
// The methods of its kinds are its own, so a DB satisfies the interfaces
// callers declare of any of them.
type DB struct {
	*BenchHistory
	*RunIndex
	*TokenStore
	*ProfileSeries
	b *sqlDB
}

// idleConns is how many connections a store keeps open between reads:
// a page reads its parts at once, and a connection opened anew reads the
// schema and warms its page cache again.
const idleConns = 8

// newDB returns the store over the connection b.
func newDB(ctx context.Context, b *sqlDB) (*DB, error) {
	b.db.SetMaxIdleConns(idleConns)
	ps := newProfileSeries(b)
	if err := b.db.QueryRowContext(ctx, `SELECT value FROM prof_meta WHERE name = 'chains_from'`).Scan(&ps.chainsFrom); err != nil {
		b.db.Close()
		return nil, fmt.Errorf("read the store's chains: %w", err)
	}
	return &DB{BenchHistory: &BenchHistory{b: b}, RunIndex: &RunIndex{b: b}, TokenStore: &TokenStore{b: b}, ProfileSeries: ps, b: b}, nil
}

// Close closes the connection every kind shares.
func (s *DB) Close() error { return s.b.db.Close() }

// ErrNoDatabase is returned by OpenExisting and OpenReadOnly when the store
// does not exist yet.
var ErrNoDatabase = errors.New("no perfscope store")

// ErrNotStore is returned by OpenExisting and OpenReadOnly for a file that is
// not a perfscope store: empty, not a SQLite database, or another program's.
var ErrNotStore = errors.New("not a perfscope store")

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
func Open(ctx context.Context, dsn string) (*DB, error) {
	return open(ctx, dsn, createStore)
}

// OpenExisting is Open for commands that change a store but must not create
// one: a store that does not exist is ErrNoDatabase, a file that is not one
// ErrNotStore, and neither is written to.
func OpenExisting(ctx context.Context, dsn string) (*DB, error) {
	return open(ctx, dsn, existingStore)
}

// OpenReadOnly is OpenExisting for commands that only read: a SQLite file is
// opened read-only. The one write it may make is the one every command
// makes to a store an older perfscope wrote: bringing its schema up to date.
func OpenReadOnly(ctx context.Context, dsn string) (*DB, error) {
	return open(ctx, dsn, readOnly)
}

// openMode says what opening a store may do to it.
type openMode int

const (
	createStore   openMode = iota // create the store when it does not exist
	existingStore                 // the store must exist; it may be written
	readOnly                      // the store must exist; it is only read
)

func open(ctx context.Context, dsn string, mode openMode) (*DB, error) {
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
