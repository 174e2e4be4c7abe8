package store

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/testenv"
)

// openTestPostgres opens a store in a new schema of the test database, so
// tests start empty and can run in parallel; the schema is dropped at the
// end. It returns the store and the DSN that selects the schema.
func openTestPostgres(t testing.TB) (*DB, string) {
	t.Helper()
	dsn := testenv.PostgresSchema(t, "perfscope_test")
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Registered after the schema's cleanup, so it runs before it.
	t.Cleanup(func() { s.Close() })
	return s, dsn
}

// testEngines are the engines a test of both runs on, each with how to
// open a fresh store on it.
var testEngines = []struct {
	name string
	open func(testing.TB) (*DB, string)
}{{"SQLite", openTestSQLite}, {"PostgreSQL", openTestPostgres}}

func TestPostgresStore(t *testing.T) {
	s, _ := openTestPostgres(t)
	runStoreSuite(t, s)
}

func TestPostgresOpenErrors(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("perfscope", "wrong-password")
	_, err = Open(ctx, u.String())
	if err == nil {
		t.Fatal("wrong password accepted")
	}
	if msg := err.Error(); !strings.Contains(msg, "connect to PostgreSQL") || strings.Contains(msg, "wrong-password") {
		t.Errorf("error %q should say what failed and not show the password", msg)
	}
}

// TestPostgresOpenWithoutCreating: a database without perfscope's tables
// is no store for the commands that must not create one, and they leave
// it without any.
func TestPostgresOpenWithoutCreating(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.PostgresSchema(t, "perfscope_test")
	for name, open := range map[string]func(context.Context, string) (*DB, error){"OpenExisting": OpenExisting, "OpenReadOnly": OpenReadOnly} {
		s, err := open(ctx, dsn)
		if err == nil {
			s.Close()
			t.Fatalf("%s of a database without perfscope's tables succeeded", name)
		}
		if msg := err.Error(); !errors.Is(err, ErrNoDatabase) || strings.Contains(msg, "\n") || strings.Contains(msg, ":perfscope@") {
			t.Errorf("%s = %q; want ErrNoDatabase in one line, without the password", name, msg)
		}
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("the schema holds %d tables (%v) after opens that must not create a store", tables, err)
	}

	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = OpenReadOnly(ctx, dsn)
	if err != nil {
		t.Fatalf("OpenReadOnly of a store: %v", err)
	}
	s.Close()
}

// TestPostgresConnectErrorOneLine: a server that cannot be reached is
// one line, however many attempts pgx made (each address, with TLS and
// without), and the password is not in it.
func TestPostgresConnectErrorOneLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, dsn := range []string{
		"postgres://perf:secret@" + addr + "/perfscope",
		"postgres://perf:secret@localhost:" + addr[strings.LastIndex(addr, ":")+1:] + "/perfscope?sslmode=prefer",
	} {
		_, err := Open(context.Background(), dsn)
		if err == nil {
			t.Fatalf("Open(%s) succeeded with nothing listening", dsn)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "connection refused") || strings.Contains(msg, "secret") {
			t.Errorf("Open(%s) = %q; want one line saying the connection was refused, without the password", dsn, msg)
		}
	}
}
