package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/perfscope/perfscope/internal/run"
)

// openPostgres connects to the PostgreSQL database dsn names and brings its
// schema up to date. Unless mode is createStore, a database without
// perfscope's tables is ErrNoDatabase and is left as it is.
func openPostgres(ctx context.Context, dsn string, mode openMode) (*DB, error) {
	where := run.RedactURL(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL DSN %s: %w", where, err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	db := stdlib.OpenDB(*cfg)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to PostgreSQL %s: %w", where, oneLineError{err})
	}
	if mode != createStore {
		var exists bool
		if err := db.QueryRowContext(ctx, `SELECT to_regclass('schema_version') IS NOT NULL`).Scan(&exists); err != nil {
			db.Close()
			return nil, fmt.Errorf("PostgreSQL %s: %w", where, err)
		}
		if !exists {
			db.Close()
			return nil, fmt.Errorf("%w at %s", ErrNoDatabase, where)
		}
	}
	// Up to date, migrate only reads: a read-only open writes nothing.
	if err := migrate(ctx, db, postgresDialect()); err != nil {
		db.Close()
		return nil, fmt.Errorf("PostgreSQL %s: %w", where, err)
	}
	return newDB(ctx, &sqlDB{db: db, d: postgresDialect()})
}

// oneLineError is a connection error in one line. pgx puts each attempt
// on a line of its own (each address, with TLS and then without), often
// the same failure twice.
type oneLineError struct{ err error }

func (e oneLineError) Unwrap() error { return e.err }

func (e oneLineError) Error() string {
	var parts []string
	for _, line := range strings.Split(e.err.Error(), "\n") {
		line = strings.TrimSuffix(strings.TrimSpace(line), ":")
		if line != "" && !slices.Contains(parts, line) {
			parts = append(parts, line)
		}
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	// "failed to connect to `user=... database=...`: attempt; attempt"
	return parts[0] + ": " + strings.Join(parts[1:], "; ")
}
