package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// openSQLite opens (creating if needed) the SQLite database at path.
//
// WAL lets the dashboard read while a run is written; busy_timeout makes a
// second writer wait instead of failing; IMMEDIATE transactions take the write
// lock when they begin, so two writers queue up rather than deadlock on a
// read lock each wants to upgrade. Together with one transaction per run this
// is what makes kill -9 mid-write leave either the whole run or none of it.
func openSQLite(ctx context.Context, path string) (Store, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := checkSQLiteFile(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := migrate(ctx, db, sqliteDialect()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return &sqlStore{db: db, d: sqliteDialect()}, nil
}

// checkSQLiteFile refuses a SQLite file some other program made, rather than
// adding perfscope's tables to it.
func checkSQLiteFile(ctx context.Context, db *sql.DB) error {
	var tables, ours int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(name = 'schema_version'), 0) FROM sqlite_master WHERE type = 'table'`).Scan(&tables, &ours)
	if err != nil {
		return err
	}
	if tables > 0 && ours == 0 {
		return fmt.Errorf("not a perfscope database (it has tables but no schema_version)")
	}
	return nil
}
