package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// openTestSQLite opens a new SQLite store in a temporary directory.
func openTestSQLite(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "perfscope.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestSQLiteStore(t *testing.T) {
	s, _ := openTestSQLite(t)
	runStoreSuite(t, s)
}

func TestSQLiteReopen(t *testing.T) {
	ctx := context.Background()
	s, path := openTestSQLite(t)
	run := BenchRun{Commit: "abcdef12", Results: parseBench(t, benchText(3, 1))}
	if _, err := s.SaveBenchRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err := OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode string
	if err := s.b.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	var versions int
	if err := s.b.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_version").Scan(&versions); err != nil || versions != schemaVersion() {
		t.Errorf("schema_version has %d rows, %v; want %d", versions, err, schemaVersion())
	}
	cs, err := s.Commits(ctx, Filter{})
	if err != nil || len(cs) != 1 {
		t.Errorf("after reopening: %v, %v", cs, err)
	}
}

func TestSQLiteOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	missing := filepath.Join(dir, "missing.db")
	if _, err := OpenExisting(ctx, missing); !errors.Is(err, ErrNoDatabase) {
		t.Errorf("OpenExisting(missing) = %v, want ErrNoDatabase", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("OpenExisting created %s", missing)
	}

	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("this is not a database\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE notes (body TEXT)"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	newer, newerPath := openTestSQLite(t)
	if _, err := newer.b.db.Exec("INSERT INTO schema_version (version, applied) VALUES (999, 0)"); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct{ path, want string }{
		{garbage, "not a database"},
		{foreign, "not a perfscope store"},
		{filepath.Join(dir, "no", "such", "dir", "x.db"), "x.db"},
		{newerPath, "upgrade perfscope"},
	} {
		s, err := Open(ctx, tc.path)
		if err == nil {
			s.Close()
			t.Errorf("Open(%s) succeeded", tc.path)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.path) || strings.Contains(msg, "\n") {
			t.Errorf("Open(%s) = %q; want one line naming the file and %q", tc.path, msg, tc.want)
		}
	}
}

// TestMigrateLoadVerdict: runs indexed before the load verdict was kept are
// judged by the default threshold when the database is upgraded.
func TestMigrateLoadVerdict(t *testing.T) {
	ctx := context.Background()
	var rows []string
	for _, tc := range []struct {
		id                 string
		requests, failures int
	}{{"old-failed", 1000, 50}, {"old-healthy", 1000, 5}, {"old-no-load", 0, 0}} {
		rows = append(rows, fmt.Sprintf(`INSERT INTO profile_runs VALUES ('%s', '/d', 't', 1, 2, '', FALSE, 'v', %d, %d, 0, 0, 0, 1)`, tc.id, tc.requests, tc.failures))
	}
	path := oldSQLite(t, 2, rows...)

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id, want := range map[string]bool{"old-failed": true, "old-healthy": false, "old-no-load": false} {
		got, err := s.ProfileRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.LoadFailed != want {
			t.Errorf("%s after the upgrade: load failed = %v, want %v", id, got.LoadFailed, want)
		}
	}
}

// oldSQLite creates a SQLite database at schema version, as a perfscope
// that knew no later migration left it, holding the rows the statements
// insert, and returns its path.
func oldSQLite(t *testing.T, version int, inserts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{"CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied BIGINT NOT NULL)"}
	for v, m := range migrations()[1 : version+1] {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO schema_version VALUES (%d, 0)", v+1))
		stmts = append(stmts, strings.Split(sqliteDialect().ddl.Replace(m), ";")...)
	}
	for _, stmt := range append(stmts, inserts...) {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return path
}

// TestOpenWithoutCreating checks the opens of commands that must not create
// a store: a path that is not a store — missing, empty, a directory, not
// SQLite, another program's database, an empty SQLite database — is
// refused in one line naming it, and left exactly as it was.
func TestOpenWithoutCreating(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := func(name string, content []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sqliteFile := func(name string, stmts ...string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		db, err := sql.Open("sqlite", p)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		// VACUUM writes the file even when it holds no table.
		for _, stmt := range append(stmts, "VACUUM") {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	for _, tc := range []struct {
		path string
		want error
	}{
		{filepath.Join(dir, "missing.db"), ErrNoDatabase},
		{file("empty.txt", nil), ErrNotStore},
		{file("garbage.db", []byte(strings.Repeat("this is not a database\n", 100))), ErrNotStore},
		{file("short.db", []byte("SQLite")), ErrNotStore},
		{sqliteFile("foreign.db", "CREATE TABLE notes (body TEXT)"), ErrNotStore},
		{sqliteFile("blank.db"), ErrNotStore},
		{dir, ErrNotStore},
	} {
		before, _ := os.ReadFile(tc.path)
		for name, open := range map[string]func(context.Context, string) (*DB, error){"OpenExisting": OpenExisting, "OpenReadOnly": OpenReadOnly} {
			s, err := open(ctx, tc.path)
			if err == nil {
				s.Close()
				t.Errorf("%s(%s) succeeded", name, tc.path)
				continue
			}
			if msg := err.Error(); !errors.Is(err, tc.want) || !strings.Contains(msg, tc.path) || strings.Contains(msg, "\n") {
				t.Errorf("%s(%s) = %q; want %q, in one line naming the file", name, tc.path, msg, tc.want)
			}
			after, statErr := os.ReadFile(tc.path)
			if tc.want == ErrNoDatabase {
				if !errors.Is(statErr, os.ErrNotExist) {
					t.Errorf("%s(%s) created it", name, tc.path)
				}
			} else if tc.path != dir && !bytes.Equal(before, after) {
				t.Errorf("%s(%s) changed the file: %d bytes before, %d after", name, tc.path, len(before), len(after))
			}
		}
	}
}

// TestOpenReadOnly reads a store without writing it: the file stays the
// same byte for byte and writes through the store fail. A store at an
// older schema version is brought up to date first, as every command does.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	s, path := openTestSQLite(t)
	if _, err := s.SaveBenchRun(ctx, BenchRun{Commit: "abcdef12", Results: parseBench(t, benchText(3, 1))}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := ro.Commits(ctx, Filter{}); err != nil || len(cs) != 1 {
		t.Errorf("Commits read-only = %v, %v; want the one commit", cs, err)
	}
	if _, err := ro.SaveBenchRun(ctx, BenchRun{Commit: "12345678", Results: parseBench(t, benchText(3, 1))}); err == nil {
		t.Error("a read-only store saved a run")
	}
	ro.Close()
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
		t.Errorf("reading the store changed it: %d bytes before, %d after (%v)", len(before), len(after), err)
	}

	old := oldSQLite(t, 2)
	ro, err = OpenReadOnly(ctx, old)
	if err != nil {
		t.Fatalf("OpenReadOnly of a store at schema version 2: %v", err)
	}
	defer ro.Close()
	if runs, err := ro.ProfileRuns(ctx, RunFilter{}); err != nil || len(runs) != 0 {
		t.Errorf("ProfileRuns of the upgraded store = %v, %v", runs, err)
	}
}
