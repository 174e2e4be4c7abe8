package store

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/testenv"
)

// openTestPostgres opens a store in a new schema of the test database, so
// tests start empty and can run in parallel; the schema is dropped at the
// end. It returns the store and the DSN that selects the schema.
func openTestPostgres(t testing.TB) (Store, string) {
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
