package gitstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/testenv"
)

// history adds n commits to r and returns every commit's hash, oldest
// first, the one repo made included.
func history(t *testing.T, r *testenv.GitRepo, n int) []string {
	t.Helper()
	hashes := []string{r.Git("rev-parse", "HEAD")}
	for i := range n {
		write(t, filepath.Join(r.Dir, "f.txt"), strconv.Itoa(i))
		hashes = append(hashes, r.Commit("c"+strconv.Itoa(i)))
	}
	return hashes
}

func TestResolveCommit(t *testing.T) {
	ctx := context.Background()
	r := repo(t)
	dir := r.Dir
	h := history(t, r, 3)
	r.Git("tag", "v1", h[1])
	r.Git("tag", "-a", "-m", "annotated", "v2", h[2])
	r.Git("branch", "side", h[0])
	for ref, want := range map[string]string{
		"HEAD": h[3], "trunk": h[3], "HEAD~2": h[1], "HEAD^": h[2], "v1": h[1],
		"v2":   h[2], // an annotated tag names its commit, not itself
		"side": h[0], h[2][:7]: h[2], h[0]: h[0],
	} {
		got, err := ResolveCommit(ctx, dir, ref)
		if err != nil || got != want {
			t.Errorf("ResolveCommit(%q) = %q, %v; want %s", ref, got, err, want)
		}
	}
	// From a subdirectory, the repository holding it.
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	if got, err := ResolveCommit(ctx, sub, "HEAD~1"); err != nil || got != h[2] {
		t.Errorf("from a subdirectory: %q, %v", got, err)
	}

	outside := t.TempDir()
	for _, c := range []struct{ dir, ref, reason string }{
		{dir, "nope", "no branch, tag or commit by that name"},
		{dir, "HEAD~9", "no branch, tag or commit by that name"},
		{dir, "HEAD:main.go", "no branch, tag or commit by that name"}, // a file, not a commit
		{dir, "--all", "not a reference"},
		{dir, "", "not a reference"},
		{outside, "HEAD", "not a git repository"},
	} {
		_, err := ResolveCommit(ctx, c.dir, c.ref)
		var re *RefError
		if !errors.As(err, &re) || !strings.Contains(re.Reason, c.reason) || strings.Contains(re.Reason, "fatal") {
			t.Errorf("ResolveCommit(%q) in %s: %v, want a RefError saying %q", c.ref, c.dir, err, c.reason)
		}
	}
}

func TestNearest(t *testing.T) {
	ctx := context.Background()
	r := repo(t)
	dir := r.Dir
	h := history(t, r, 6) // h[0] .. h[6] on trunk
	// A branch off h[2] with two commits of its own.
	r.Git("checkout", "-q", "-b", "side", h[2])
	side := history(t, r, 2)[1:]
	r.Git("checkout", "-q", "trunk")

	name := func(n *Neighbour) string {
		if n == nil {
			return "none"
		}
		for i, x := range h {
			if x == n.Commit {
				return "h" + strconv.Itoa(i) + "@" + strconv.Itoa(n.Distance)
			}
		}
		for i, x := range side {
			if x == n.Commit {
				return "side" + strconv.Itoa(i) + "@" + strconv.Itoa(n.Distance)
			}
		}
		return n.Commit
	}
	for _, c := range []struct {
		commit     string
		candidates []string
		before     string
		after      string
	}{
		{h[3], []string{h[0], h[1], h[6]}, "h1@2", "h6@3"},
		{h[3], []string{h[3], h[5], h[6]}, "none", "h5@2"}, // the commit itself is not its neighbour
		{h[0], []string{h[1], side[1]}, "none", "h1@1"},
		{side[1], []string{h[1], h[3], h[6]}, "h1@3", "none"},
		{h[2], []string{side[0], h[4]}, "none", "side0@1"}, // either branch: the one nearer
		{h[1], []string{side[1], h[3]}, "none", "h3@2"},
		{h[3], nil, "none", "none"},
		{h[3], []string{"0123456789abcdef0123456789abcdef01234567"}, "none", "none"}, // not in this repository
	} {
		before, after, err := Nearest(ctx, dir, c.commit, c.candidates)
		if err != nil {
			t.Fatal(err)
		}
		if name(before) != c.before || name(after) != c.after {
			t.Errorf("Nearest(%s): before %s, after %s; want %s, %s", name(&Neighbour{c.commit, 0}), name(before), name(after), c.before, c.after)
		}
	}
}
