package store

import (
	"context"
	"errors"
	"os"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/benchstats"
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

	if _, err := (CommitResolver{DB: path}).Resolve(ctx, "feedface"); !errors.Is(err, benchstats.ErrNotFound) {
		t.Errorf("unknown commit: %v, want benchstats.ErrNotFound", err)
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
