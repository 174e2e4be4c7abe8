package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenCommands creates a token with 'perfscope token create' and
// lists it without showing it again.
func TestTokenCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "perfscope.db")
	out, err := runCLI(t, "token", "create", "--db", db, "--name", "ci")
	token := strings.TrimSpace(out)
	if err != nil || !strings.HasPrefix(token, "pst_") {
		t.Fatalf("token create = %q, %v", out, err)
	}
	if out, err := runCLI(t, "token", "list", "--db", db); err != nil || !strings.Contains(out, "ci") || strings.Contains(out, token) {
		t.Errorf("token list = %q, %v; want the name and not the token", out, err)
	}
}

// TestPushUsage checks that what is wrong on the command line is a usage
// error (exit status 2) and a server that cannot be reached is not.
// internal/client tests uploads against a real server.
func TestPushUsage(t *testing.T) {
	t.Setenv("PERFSCOPE_SERVER", "")
	t.Setenv("PERFSCOPE_TOKEN", "pst_x")
	dir := t.TempDir()
	results := filepath.Join(dir, "results.txt")
	os.WriteFile(results, []byte("commit: abc123\nBenchmarkA-8 1000 120 ns/op\n"), 0o644)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("no results\n"), 0o644)
	closed := "http://127.0.0.1:1"
	for _, tc := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"push", "--server", "ftp://x", results}, true, "--server"},
		{[]string{"push", "--server", closed, filepath.Join(dir, "missing.txt")}, true, "missing.txt"},
		{[]string{"push", "--server", closed, empty}, true, "no benchmark results"},
		{[]string{"push", "--server", closed, dir}, true, "run.json"},
		{[]string{"push", "--server", closed, "--timeout", "0s", results}, true, "--timeout"},
		{[]string{"push", "--server", closed, results}, false, "cannot reach"},
	} {
		_, err := runCLI(t, tc.args...)
		var ue usageError
		if err == nil || errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v = %v (usage error %v); want %q", tc.args, err, errors.As(err, &ue), tc.want)
		}
	}
	t.Setenv("PERFSCOPE_TOKEN", "")
	if _, err := runCLI(t, "push", "--server", closed, results); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("push without a token = %v", err)
	}
}

// TestRunsRmUsage: a missing token is a usage error; an unreachable
// server is not. internal/client tests deletion against a real server.
func TestRunsRmUsage(t *testing.T) {
	t.Setenv("PERFSCOPE_SERVER", "")
	t.Setenv("PERFSCOPE_TOKEN", "")
	closed := "http://127.0.0.1:1"
	for _, tc := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"runs", "rm", "--server", closed, "x"}, true, "no token"},
		{[]string{"runs", "rm", "--server", closed, "--token", "pst_x", "x"}, false, "cannot reach"},
	} {
		_, err := runCLI(t, tc.args...)
		var ue usageError
		if err == nil || errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v = %v (usage error %v); want %q", tc.args, err, errors.As(err, &ue), tc.want)
		}
	}
}
