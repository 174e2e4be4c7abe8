package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// openSQLite opens the SQLite database at path, creating it if mode allows.
// Unless it may create the store, it first checks that path is one with a
// read-only connection, so that a file that is not is left untouched (the
// journal mode alone is written into the file's header).
//
// WAL lets the dashboard read while a run is written; busy_timeout makes a
// second writer wait instead of failing; IMMEDIATE transactions take the write
// lock when they begin, so two writers queue up rather than deadlock on a
// read lock each wants to upgrade. Together with one transaction per run this
// is what makes kill -9 mid-write leave either the whole run or none of it.
func openSQLite(ctx context.Context, path string, mode openMode) (*DB, error) {
	if mode != createStore {
		if err := checkStoreFile(path); err != nil {
			return nil, err
		}
		db, err := sqliteDB(ctx, path, true)
		if err != nil {
			return nil, err
		}
		if mode == readOnly {
			if have, err := schemaVersionOf(ctx, db); err == nil && have == schemaVersion() {
				return newDB(ctx, &sqlDB{db: db, d: sqliteDialect()})
			}
			// An older perfscope's store is brought up to date, as
			// every command does, by a connection that may write.
		}
		db.Close()
	}
	db, err := sqliteDB(ctx, path, false)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, db, sqliteDialect()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return newDB(ctx, &sqlDB{db: db, d: sqliteDialect()})
}

// sqliteDB connects to the database at path and checks that it is empty
// or perfscope's; with readOnly, the connection writes nothing and the
// database must be perfscope's.
func sqliteDB(ctx context.Context, path string, readOnly bool) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Set("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := checkSQLiteFile(ctx, db, readOnly); err != nil {
		db.Close()
		if errors.Is(err, ErrNotStore) {
			return nil, fmt.Errorf("%s is %w", path, err)
		}
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return db, nil
}

// sqliteHeader starts every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// checkStoreFile refuses, before SQLite opens it, a path that cannot be an
// existing store: missing, a directory, empty, or not a SQLite database.
func checkStoreFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w at %s", ErrNoDatabase, path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is %w (it is a directory)", path, ErrNotStore)
	}
	header := make([]byte, len(sqliteHeader))
	n, err := io.ReadFull(f, header)
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return fmt.Errorf("%s is %w (it is empty)", path, ErrNotStore)
	case !bytes.Equal(header[:n], sqliteHeader):
		return fmt.Errorf("%s is %w (it is not a SQLite database)", path, ErrNotStore)
	}
	return nil
}

// checkSQLiteFile refuses a SQLite file some other program made, rather than
// adding perfscope's tables to it; with existing, an empty database too.
func checkSQLiteFile(ctx context.Context, db *sql.DB, existing bool) error {
	var tables, ours int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(name = 'schema_version'), 0) FROM sqlite_master WHERE type = 'table'`).Scan(&tables, &ours)
	if err != nil {
		return err
	}
	switch {
	case tables > 0 && ours == 0:
		return fmt.Errorf("%w (it has tables but no schema_version)", ErrNotStore)
	case tables == 0 && existing:
		return fmt.Errorf("%w (it is a SQLite database without perfscope's tables)", ErrNotStore)
	}
	return nil
}
