package store

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// openPostgres connects to the PostgreSQL database dsn names and brings its
// schema up to date.
func openPostgres(ctx context.Context, dsn string) (Store, error) {
	where := redactDSN(dsn)
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
		return nil, fmt.Errorf("connect to PostgreSQL %s: %w", where, err)
	}
	if err := migrate(ctx, db, postgresDialect()); err != nil {
		db.Close()
		return nil, fmt.Errorf("PostgreSQL %s: %w", where, err)
	}
	return &sqlStore{db: db, d: postgresDialect()}, nil
}

// redactDSN returns dsn without its password, for error messages.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
