package store

import (
	"context"
	"net"
	"strings"
	"testing"
)

// TestDSNRedacted checks that a PostgreSQL DSN's secrets, in its password
// or its query, stay out of the error that names the server.
func TestDSNRedacted(t *testing.T) {
	// A port nothing listens on: the listener is closed before the
	// connection is tried.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dsn := "postgres://perfscope:hunter2@" + addr + "/perfscope?sslmode=disable&password=swordfish&connect_timeout=5"
	_, err = Open(context.Background(), dsn)
	if err == nil {
		t.Fatal("opened a database on a closed port")
	}
	msg := err.Error()
	for _, secret := range []string{"hunter2", "swordfish"} {
		if strings.Contains(msg, secret) {
			t.Errorf("error shows the secret %q: %s", secret, msg)
		}
	}
	if !strings.Contains(msg, addr) {
		t.Errorf("error does not name the server %s: %s", addr, msg)
	}
}
