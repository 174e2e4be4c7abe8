package gitstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perfscope/perfscope/internal/testenv"
)

// repo makes a git repository with one commit, on branch trunk.
func repo(t *testing.T) *testenv.GitRepo {
	t.Helper()
	r := testenv.NewGitRepo(t, "trunk")
	write(t, filepath.Join(r.Dir, "main.go"), "package main\n")
	r.Commit("first")
	return r
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
	dir := repo(t).Dir
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
	dir := repo(t).Dir
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

func TestShortRef(t *testing.T) {
	for in, want := range map[string]string{
		"0123456789abcdef0123456789abcdef01234567":       "0123456789ab",
		"0123456789abcdef0123456789abcdef01234567+dirty": "0123456789ab+dirty",
		"abc1":       "abc1",
		"abc1+dirty": "abc1+dirty",
	} {
		if got := ShortRef(in); got != want {
			t.Errorf("ShortRef(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadSubjectAndAuthor(t *testing.T) {
	ctx := context.Background()
	r := repo(t)
	write(t, filepath.Join(r.Dir, "main.go"), "package main\n\nfunc main() {}\n")
	r.Git("add", "-A")
	r.Git("commit", "-q", "--author", "Ada Lovelace <ada@example.com>",
		"-m", "parse: skip <script>\tcopies\n\nThe body is not the subject.")
	write(t, filepath.Join(r.Dir, "new.go"), "package main\n")
	s, err := Read(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Subject != "parse: skip <script> copies" || s.Author != "Ada Lovelace" || !s.Dirty {
		t.Fatalf("dirty tree on a commit by Ada: %+v", s)
	}

	// A subject of any length is read to a bound and cut at a
	// character.
	long := strings.Repeat("é", 5000)
	r.Git("commit", "-q", "--allow-empty", "-m", long)
	c, err := Describe(ctx, r.Dir, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Subject) > MaxSubject || !strings.HasSuffix(c.Subject, "…") || !utf8.ValidString(c.Subject) ||
		!strings.HasPrefix(long, strings.TrimSuffix(c.Subject, "…")) || c.Author != "t" {
		t.Errorf("long subject kept as %q (%d bytes), author %q", c.Subject, len(c.Subject), c.Author)
	}
	if _, err := Describe(ctx, r.Dir, "0123456789abcdef0123456789abcdef01234567"); err == nil {
		t.Error("Describe of an unknown commit: no error")
	}
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit int
		want  string
	}{
		{"fix\r\nthe\x00 bug ", 100, "fix the bug"},
		{"abcdefgh", 8, "abcdefgh"},
		{"abcdefghi", 8, "abcde…"},
		{"ab\xffc", 10, "ab\uFFFDc"},
		{"ééééé", 6, "é…"},
	} {
		if got := OneLine(c.in, c.limit); got != c.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
		}
	}
}
