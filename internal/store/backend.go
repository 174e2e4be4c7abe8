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

// A querier runs read queries: the pool of connections, or a read view's
// transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// viewKey is the key of the read view a context carries.
type viewKey struct{}

// reader is what runs ctx's read queries: the read view ctx carries (see
// view), else the pool.
func (b *sqlDB) reader(ctx context.Context) querier {
	if tx, ok := ctx.Value(viewKey{}).(*sql.Tx); ok {
		return tx
	}
	return b.db
}

// view returns ctx carrying a read view of the store, for the statements
// of one read, and the function that ends it; a ctx that already carries
// one is returned as it is. On SQLite a view is one read transaction: the
// read's statements see the store as it was at the first, and share one
// connection's page cache, which SQLite empties at the start of every
// transaction once another connection has written (every scrape stored
// does). Without a view each statement is a transaction of its own, and
// a read of a hundred statements while scrapes are stored reads most of
// its pages from the file again. PostgreSQL has no such cache to keep,
// and reads statement by statement.
func (b *sqlDB) view(ctx context.Context) (context.Context, func()) {
	if !b.d.views || ctx.Value(viewKey{}) != nil {
		return ctx, func() {}
	}
	return b.newView(ctx)
}

// fork gives a goroutine of a read a view of its own where the read has
// one: a connection runs one statement at a time, so goroutines sharing
// one would read in turn.
func (b *sqlDB) fork(ctx context.Context) (context.Context, func()) {
	if ctx.Value(viewKey{}) == nil {
		return ctx, func() {}
	}
	return b.newView(ctx)
}

func (b *sqlDB) newView(ctx context.Context) (context.Context, func()) {
	tx, err := b.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		// Read statement by statement; a statement that fails says why.
		return ctx, func() {}
	}
	return context.WithValue(ctx, viewKey{}, tx), func() { tx.Rollback() }
}

// each runs a read query and calls scan for every row it returns, in order.
func (b *sqlDB) each(ctx context.Context, query string, args []any, scan func(*sql.Rows) error) error {
	rows, err := b.reader(ctx).QueryContext(ctx, b.q(query), args...)
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
