package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// postgresDSN returns the test server's DSN, skipping the test when none is
// configured.
func postgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("PERFSCOPE_TEST_POSTGRES")
	if dsn == "" {
		// The project's test command starts PostgreSQL and requires it.
		if os.Getenv("PERFSCOPE_REQUIRE_TOOLS") != "" {
			t.Fatal("PERFSCOPE_TEST_POSTGRES is not set, and scripts/test.sh requires it: start a server with scripts/start-postgres.sh and set it to the DSN it prints")
		}
		t.Skip("PERFSCOPE_TEST_POSTGRES is not set: start a server with scripts/start-postgres.sh and set it to the DSN it prints")
	}
	return dsn
}

// openTestPostgres opens a store in a new schema of the test database, so
// tests start empty and can run in parallel; the schema is dropped at the
// end. It returns the store and the DSN that selects the schema.
func openTestPostgres(t testing.TB) (Store, string) {
	t.Helper()
	ctx := context.Background()
	base := postgresDSN(t)
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	admin := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { admin.Close() })
	schema := fmt.Sprintf("perfscope_test_%d", rand.Uint64()>>1)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	dsn := u.String()
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Registered after the schema's cleanup, so it runs before it.
	t.Cleanup(func() { s.Close() })
	return s, dsn
}

func TestPostgresStore(t *testing.T) {
	s, _ := openTestPostgres(t)
	runStoreSuite(t, s)
}

func TestPostgresOpenErrors(t *testing.T) {
	ctx := context.Background()
	dsn := postgresDSN(t)
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
