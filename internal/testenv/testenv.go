// Package testenv gives tests the outside parts they need — a PostgreSQL
// server, Chromium, benchstat — or says why they are missing. The project's
// test command (scripts/test.sh) installs and starts every one of them and
// sets PERFSCOPE_REQUIRE_TOOLS, so there a missing part fails the test;
// elsewhere it skips the test with a hint.
package testenv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Required reports whether missing tools fail tests instead of skipping
// them.
func Required() bool { return os.Getenv("PERFSCOPE_REQUIRE_TOOLS") != "" || os.Getenv("CI") != "" }

// Missing ends the test because what is not available: a failure when
// tools are required, else a skip. hint says how to provide it.
func Missing(t testing.TB, what, hint string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s, and scripts/test.sh requires it: %s", what, hint)
	}
	t.Skipf("%s: %s", what, hint)
}

// PostgresDSN returns the DSN of the test PostgreSQL server named by
// PERFSCOPE_TEST_POSTGRES.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("PERFSCOPE_TEST_POSTGRES")
	if dsn == "" {
		Missing(t, "PERFSCOPE_TEST_POSTGRES is not set", "start a server with scripts/start-postgres.sh and set it to the DSN it prints")
	}
	return dsn
}

// PostgresSchema creates a new, empty schema in the test database and
// returns a DSN whose search_path selects it, so tests start empty and run
// in parallel. The schema is dropped when the test ends; cleanups the test
// registers later (closing its store) run before that.
func PostgresSchema(t testing.TB, prefix string) string {
	t.Helper()
	base := PostgresDSN(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	schema := fmt.Sprintf("%s_%d", prefix, rand.Uint64()>>1)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("PERFSCOPE_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Tool returns the path of the command name on PATH, or ends the test as
// Missing does.
func Tool(t testing.TB, name, hint string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name+" is not on PATH", hint)
	}
	return p
}
