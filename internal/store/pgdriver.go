package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
)

// This file adapts pgx connections to database/sql, so PostgreSQL shares the
// SQLite implementation and its pool. pgx's own stdlib adapter would do the
// same but imports pgxpool and with it a module this one does not require.

// pgConnector opens pgx connections for database/sql.
type pgConnector struct{ cfg *pgx.ConnConfig }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, c.cfg.Copy())
	if err != nil {
		return nil, err
	}
	return &pgConn{c: conn}, nil
}

func (c pgConnector) Driver() driver.Driver { return pgDriver{} }

// pgDriver exists because database/sql asks a connector for one; connections
// come from pgConnector.
type pgDriver struct{}

func (pgDriver) Open(dsn string) (driver.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	return pgConnector{cfg}.Connect(context.Background())
}

// pgConn is one PostgreSQL connection. database/sql never uses a connection
// from two goroutines at once, which is all pgx.Conn requires.
type pgConn struct{ c *pgx.Conn }

var (
	_ driver.ConnBeginTx        = (*pgConn)(nil)
	_ driver.ExecerContext      = (*pgConn)(nil)
	_ driver.QueryerContext     = (*pgConn)(nil)
	_ driver.ConnPrepareContext = (*pgConn)(nil)
	_ driver.Pinger             = (*pgConn)(nil)
	_ driver.Validator          = (*pgConn)(nil)
)

func (c *pgConn) Close() error { return c.c.Close(context.Background()) }

func (c *pgConn) IsValid() bool { return !c.c.IsClosed() }

func (c *pgConn) Ping(ctx context.Context) error { return c.c.Ping(ctx) }

func (c *pgConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	begin := "BEGIN"
	if opts.ReadOnly {
		begin += " READ ONLY"
	}
	if _, err := c.c.Exec(ctx, begin); err != nil {
		return nil, err
	}
	return pgTx{c.c}, nil
}

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext returns a statement that sends its text each time: pgx
// already caches the server-side statement per connection.
func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return &pgStmt{conn: c, query: query}, nil
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	tag, err := c.c.Exec(ctx, query, pgArgs(args)...)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.c.Query(ctx, query, pgArgs(args)...)
	if err != nil {
		return nil, err
	}
	return &pgRows{rows: rows}, nil
}

func pgArgs(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

type pgTx struct{ c *pgx.Conn }

func (t pgTx) Commit() error {
	_, err := t.c.Exec(context.Background(), "COMMIT")
	return err
}

func (t pgTx) Rollback() error {
	_, err := t.c.Exec(context.Background(), "ROLLBACK")
	return err
}

type pgStmt struct {
	conn  *pgConn
	query string
}

var (
	_ driver.StmtExecContext  = (*pgStmt)(nil)
	_ driver.StmtQueryContext = (*pgStmt)(nil)
)

func (s *pgStmt) Close() error  { return nil }
func (s *pgStmt) NumInput() int { return -1 } // let the server count

func (s *pgStmt) Exec(args []driver.Value) (driver.Result, error) {
	return nil, errors.New("pgStmt.Exec: use ExecContext")
}

func (s *pgStmt) Query(args []driver.Value) (driver.Rows, error) {
	return nil, errors.New("pgStmt.Query: use QueryContext")
}

func (s *pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.conn.ExecContext(ctx, s.query, args)
}

func (s *pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.conn.QueryContext(ctx, s.query, args)
}

// pgRows converts pgx's decoded values to the few types database/sql takes.
type pgRows struct {
	rows pgx.Rows
	cols []string
}

func (r *pgRows) Columns() []string {
	if r.cols == nil {
		for _, f := range r.rows.FieldDescriptions() {
			r.cols = append(r.cols, f.Name)
		}
	}
	return r.cols
}

func (r *pgRows) Close() error {
	r.rows.Close()
	return r.rows.Err()
}

func (r *pgRows) Next(dest []driver.Value) error {
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	vals, err := r.rows.Values()
	if err != nil {
		return err
	}
	for i, v := range vals {
		switch v := v.(type) {
		case int16:
			dest[i] = int64(v)
		case int32:
			dest[i] = int64(v)
		case float32:
			dest[i] = float64(v)
		default:
			if v != nil && !driver.IsValue(v) {
				return fmt.Errorf("column %s: unsupported PostgreSQL value of type %T", r.Columns()[i], v)
			}
			dest[i] = v
		}
	}
	return nil
}
