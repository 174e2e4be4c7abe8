package store

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"
)

// sqlDB is the SQL backend every kind of data shares: one connection and the
// dialect of its engine. Queries are written once, with ? placeholders, and
// adapted to the engine here.
type sqlDB struct {
	db *sql.DB
	d  dialect
	// rowsRead counts the rows read queries returned, so tests can check
	// that a listing reads what it answers and not the whole table.
	rowsRead atomic.Int64
}

// q adapts a query written with ? placeholders to the engine.
func (b *sqlDB) q(query string) string { return b.d.rebind(query) }

// each runs a read query and calls scan for every row it returns, in order.
func (b *sqlDB) each(ctx context.Context, query string, args []any, scan func(*sql.Rows) error) error {
	rows, err := b.db.QueryContext(ctx, b.q(query), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		b.rowsRead.Add(1)
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// nanos stores a time as unix nanoseconds, the zero time as 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos is the inverse of nanos.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
