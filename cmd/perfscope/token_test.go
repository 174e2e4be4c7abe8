package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenRevoke revokes a token by the ID 'token list' shows: it leaves
// the list, and revoking it again, or any ID no token has, fails.
func TestTokenRevoke(t *testing.T) {
	db := filepath.Join(t.TempDir(), "perfscope.db")
	for _, name := range []string{"ci", "laptop"} {
		if _, code := perfCLI(t, "token", "create", "--db", db, "--name", name); code != 0 {
			t.Fatalf("token create --name %s: exit %d", name, code)
		}
	}
	if _, code := perfCLI(t, "token", "revoke", "1", "--db", db); code != 0 {
		t.Fatalf("token revoke 1: exit %d", code)
	}
	out, code := perfCLI(t, "token", "list", "--db", db)
	if code != 0 || strings.Contains(out, "ci") || !strings.Contains(out, "laptop") {
		t.Errorf("token list after revoking ci = %q, exit %d; want laptop only", out, code)
	}
	for _, args := range [][]string{{"1"}, {"99"}} {
		if _, code := perfCLI(t, append([]string{"token", "revoke", "--db", db}, args...)...); code != 1 {
			t.Errorf("token revoke %s: exit %d, want 1", args[0], code)
		}
	}
	for _, bad := range []string{"x", "0", "-3"} {
		if _, code := perfCLI(t, "token", "revoke", "--db", db, "--", bad); code != 2 {
			t.Errorf("token revoke %q: exit %d, want 2", bad, code)
		}
	}
}

// TestTokenReadersCreateNoStore checks that list and revoke on a store that
// does not exist fail with one line and leave no file behind.
func TestTokenReadersCreateNoStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "typo.db")
	for _, args := range [][]string{{"token", "list", "--db", db}, {"token", "revoke", "1", "--db", db}} {
		if _, code := perfCLI(t, args...); code != 1 {
			t.Errorf("%s: exit %d, want 1", strings.Join(args, " "), code)
		}
		_, err := runCLI(t, args...)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), db) {
			t.Errorf("%s: error %v, want one line naming %s", strings.Join(args, " "), err, db)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the directory holds %v (%v) after reading a missing store; want nothing created", entries, err)
	}
}
