package gitstate

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// repo makes a git repository with one commit in a temporary directory.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "trunk")
	write(t, filepath.Join(dir, "main.go"), "package main\n")
	run("add", ".")
	run("commit", "-q", "-m", "first")
	return dir
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRead(t *testing.T) {
	ctx := context.Background()
	dir := repo(t)
	s, err := Read(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Commit) != 40 || s.Branch != "trunk" || s.Dirty || s.CommitTime.IsZero() {
		t.Fatalf("clean repository: %+v", s)
	}
	if Short(s.Commit) != s.Commit[:12] {
		t.Errorf("Short(%s) = %s", s.Commit, Short(s.Commit))
	}

	// perfscope's own results never make a tree dirty, at any depth, nor
	// do directories the caller excludes.
	write(t, filepath.Join(dir, ResultsDir, "runs", "x", "run.json"), "{}")
	write(t, filepath.Join(dir, "svc", ResultsDir, "bench.txt"), "x")
	write(t, filepath.Join(dir, "out", "run.json"), "{}")
	if d, err := Dirty(ctx, dir, "out"); err != nil || d {
		t.Fatalf("results only: dirty %v, %v", d, err)
	}
	// From a subdirectory the whole tree is checked.
	if d, err := Dirty(ctx, filepath.Join(dir, "svc"), "../out", "/abs"); err != nil || !d {
		t.Fatalf("out/ not excluded from svc/: dirty %v, %v", d, err)
	}
	// An untracked source file and an edit both count.
	write(t, filepath.Join(dir, "new.go"), "package main\n")
	if d, err := Dirty(ctx, dir, "out"); err != nil || !d {
		t.Fatalf("untracked file: dirty %v, %v", d, err)
	}
}

func TestReadOutsideRepository(t *testing.T) {
	_, err := Read(context.Background(), t.TempDir())
	if !errors.Is(err, ErrNoRepository) {
		t.Fatalf("want ErrNoRepository, got %v", err)
	}
}

func TestShort(t *testing.T) {
	for in, want := range map[string]string{"": "", "abc": "abc", "0123456789abcdef": "0123456789ab"} {
		if got := Short(in); got != want {
			t.Errorf("Short(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCommitTime(t *testing.T) {
	ctx := context.Background()
	dir := repo(t)
	s, err := Read(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if ct, err := CommitTime(ctx, dir, s.Commit); err != nil || !ct.Equal(s.CommitTime) {
		t.Errorf("CommitTime(%s) = %v, %v; want HEAD's %v", s.Commit, ct, err, s.CommitTime)
	}
	for _, rev := range []string{"", "0123456789abcdef0123456789abcdef01234567"} {
		if ct, err := CommitTime(ctx, dir, rev); err == nil {
			t.Errorf("CommitTime(%q) = %v, want an error", rev, ct)
		}
	}
}
