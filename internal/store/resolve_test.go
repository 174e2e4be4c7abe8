package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/testenv"
)

// TestCommitResolver stores a real benchmark file under a commit and checks
// that compare's statistics see the same samples from the store as from the
// file.
func TestCommitResolver(t *testing.T) {
	ctx := context.Background()
	s, path := openTestSQLite(t)
	f, err := os.Open("../benchstats/testdata/old.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := bench.Parse(f, "old.txt")
	if err != nil {
		t.Fatal(err)
	}
	commit := "0123456789abcdef0123456789abcdef01234567"
	machine := Machine{Hostname: "ci", GOOS: "linux", GOARCH: "amd64", CPU: "Oxide Virtual Turin-like Processor"}
	if _, err := s.SaveBenchRun(ctx, BenchRun{Commit: commit, Machine: machine, GoVersion: "go1.26.0", Results: res.Results}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// compare only reads the store.
	defer func() {
		if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
			t.Errorf("resolving commits changed the store: %d bytes before, %d after (%v)", len(before), len(after), err)
		}
	}()

	file, err := benchstats.FileResolver{}.Resolve(ctx, "../benchstats/testdata/old.txt")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := CommitResolver{DB: path}.Resolve(ctx, commit[:8])
	if err != nil {
		t.Fatal(err)
	}
	// One stored line per sample and unit: a file line carries every unit.
	units, _ := countResults(t, file)
	if _, n := countResults(t, stored); n != units {
		t.Errorf("stored input has %d results, want %d (file lines × units)", n, units)
	}
	// The stored commit carries its runs' configuration, so comparing it
	// with a file from the same machine makes the tables two files make.
	// The file has no "go" line; ignore it as a user would.
	newer, err := benchstats.FileResolver{}.Resolve(ctx, "../benchstats/testdata/new.txt")
	if err != nil {
		t.Fatal(err)
	}
	opts := benchstats.Options{Ignore: []string{"go"}}
	files, err := benchstats.Compare(ctx, []*benchstats.Input{file, newer}, opts)
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := benchstats.Compare(ctx, []*benchstats.Input{stored, newer}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(files.Tables) == 0 || len(mixed.Tables) != len(files.Tables) {
		t.Errorf("commit vs file gives %d tables, file vs file %d", len(mixed.Tables), len(files.Tables))
	}
	for i := range min(len(files.Tables), len(mixed.Tables)) {
		if got, want := len(mixed.Tables[i].Columns), len(files.Tables[i].Columns); got != want {
			t.Errorf("table %d: commit vs file has %d columns, file vs file %d", i, got, want)
		}
	}

	if _, err := (CommitResolver{DB: path, Dir: t.TempDir()}).Resolve(ctx, "feedface"); !errors.Is(err, ErrUnknownCommit) {
		t.Errorf("unknown commit: %v, want ErrUnknownCommit", err)
	}
}

// countResults reads in and returns how many values and how many results
// it holds.
func countResults(t *testing.T, in *benchstats.Input) (values, results int) {
	t.Helper()
	err := in.Read(context.Background(), func(rec benchfmt.Record) {
		if r, ok := rec.(*benchfmt.Result); ok {
			values += len(r.Values)
			results++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return values, results
}

// TestCommitResolverGitRefs records results for some commits of a real git
// repository and resolves what git reads as commits: a reference that is
// not a stored hash prefix is read by git and its commit looked up.
func TestCommitResolverGitRefs(t *testing.T) {
	ctx := context.Background()
	repo := testenv.NewGitRepo(t, "trunk")
	dir := repo.Dir
	var h []string // h[0] .. h[4], HEAD is h[4]
	for i := range 5 {
		h = append(h, repo.Commit(strconv.Itoa(i)))
	}
	repo.Git("tag", "v1", h[1])

	s, path := openTestSQLite(t)
	res, err := bench.Parse(strings.NewReader("goos: linux\nBenchmarkX-2 \t 100 \t 10 ns/op\nBenchmarkX-2 \t 100 \t 11 ns/op\n"), "x.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []BenchRun{{Commit: h[1]}, {Commit: h[3]}, {Commit: h[2], Dirty: true}} {
		run.Machine, run.Results = Machine{Hostname: "ci"}, res.Results
		if _, err := s.SaveBenchRun(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	r := CommitResolver{DB: path, Dir: dir}

	for ref, want := range map[string]string{
		"v1": h[1], "HEAD~1": h[3], "trunk^": h[3], h[3][:7]: h[3], h[1]: h[1],
		"HEAD~2+dirty": h[2] + "+dirty",
	} {
		in, err := r.Resolve(ctx, ref)
		if err != nil {
			t.Errorf("Resolve(%q): %v", ref, err)
			continue
		}
		if _, n := countResults(t, in); n != 2 {
			t.Errorf("Resolve(%q) (%s) has %d results, want 2", ref, want, n)
		}
	}

	short := func(i int) string { return h[i][:12] }
	for _, c := range []struct {
		r    CommitResolver
		ref  string
		want []string
	}{
		{r, "HEAD", []string{"HEAD: commit " + short(4) + " has no stored results (nearest stored: " + short(3) + ", 1 commit before)", "'perfscope bench'"}},
		{r, "HEAD~4", []string{"HEAD~4: commit " + short(0) + " has no stored results (nearest stored: " + short(1) + ", 1 commit after)"}},
		{r, "HEAD~2", []string{"only runs on a modified work tree of it are stored, as " + short(2) + "+dirty"}},
		{r, "v1+dirty", []string{"its runs on a clean work tree are stored as " + short(1)}},
		{r, "nope", []string{"nope: not a file, run, stored commit or git reference (git: no branch, tag or commit by that name)"}},
		{r, "ab", []string{"ab: not a file, run, stored commit or git reference"}},
		{CommitResolver{DB: path, Dir: t.TempDir()}, "HEAD", []string{"HEAD: not a file, run, stored commit or git reference (git: not a git repository"}},
		{CommitResolver{DB: filepath.Join(t.TempDir(), "none.db"), Dir: dir}, "HEAD", []string{"HEAD: commit " + short(4) + " has no stored results (no history database yet: record them with 'perfscope bench'"}},
		{CommitResolver{DB: filepath.Join(t.TempDir(), "none.db"), Dir: dir}, "nope", []string{"nope: not a file, run, stored commit or git reference"}},
	} {
		_, err := c.r.Resolve(ctx, c.ref)
		if !errors.Is(err, ErrUnknownCommit) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Resolve(%q): %v, want one line wrapping ErrUnknownCommit", c.ref, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Resolve(%q):\n%v\nwant it to say %q", c.ref, err, w)
			}
		}
	}
	// Nothing was created where no database was.
	if _, err := os.Stat(filepath.Join(dir, "none.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a store was created: %v", err)
	}
}
