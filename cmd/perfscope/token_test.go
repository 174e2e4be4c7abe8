package main

import (
	"bytes"
	"fmt"
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

// TestReadersLeaveNonStoresAlone runs the commands that only read (and
// token revoke, which must not create a store) on files that are not a
// store: each fails with one line naming the file, and the file is the
// same, byte for byte, afterwards.
func TestReadersLeaveNonStoresAlone(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"empty.txt":  nil,
		"notes.txt":  []byte("not a database\n"),
		"header.bin": []byte("SQLite format"),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		db := filepath.Join(dir, name)
		for _, args := range [][]string{
			{"token", "list", "--db", db},
			{"token", "revoke", "1", "--db", db},
			{"history", "--db", db},
		} {
			cmdline := strings.Join(args, " ")
			if _, code := perfCLI(t, args...); code != 1 {
				t.Errorf("%s: exit %d, want 1", cmdline, code)
			}
			_, err := runCLI(t, args...)
			if msg := fmt.Sprint(err); !strings.Contains(msg, db+" is not a perfscope store") || !strings.Contains(msg, "check --db") || strings.Contains(msg, "\n") {
				t.Errorf("%s: error %q, want one line saying %s is not a perfscope store", cmdline, msg, db)
			}
			if after, err := os.ReadFile(db); err != nil || !bytes.Equal(after, content) {
				t.Errorf("%s changed %s: %q (%v), was %q", cmdline, name, after, err, content)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(files) {
		t.Errorf("the directory holds %d files after the commands, want %d", len(entries), len(files))
	}

	// A store is read, not written.
	db := filepath.Join(t.TempDir(), "perfscope.db")
	if _, code := perfCLI(t, "token", "create", "--db", db); code != 0 {
		t.Fatalf("token create: exit %d", code)
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if out, code := perfCLI(t, "token", "list", "--db", db); code != 0 || !strings.Contains(out, "token") {
		t.Errorf("token list: exit %d, %q", code, out)
	}
	perfCLI(t, "history", "--db", db) // no benchmarks: exit 1
	if after, err := os.ReadFile(db); err != nil || !bytes.Equal(before, after) {
		t.Errorf("token list and history changed the store: %d bytes before, %d after (%v)", len(before), len(after), err)
	}
}
