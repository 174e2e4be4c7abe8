package store

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/compare"
)

// TestCommitResolver stores a real benchmark file under a commit and checks
// that compare's statistics see the same samples from the store as from the
// file.
func TestCommitResolver(t *testing.T) {
	ctx := context.Background()
	s, path := openTestSQLite(t)
	f, err := os.Open("../compare/testdata/old.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := bench.Parse(f, "old.txt")
	if err != nil {
		t.Fatal(err)
	}
	commit := "0123456789abcdef0123456789abcdef01234567"
	if _, err := s.SaveBenchRun(ctx, BenchRun{Commit: commit, Results: res.Results}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	file, err := compare.FileResolver{}.Resolve(ctx, "../compare/testdata/old.txt")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := CommitResolver{DB: path}.Resolve(ctx, commit[:8])
	if err != nil {
		t.Fatal(err)
	}
	// One stored line per sample and unit: a file line carries every unit.
	units := 0
	for _, r := range file.Results {
		units += len(r.Values)
	}
	if len(stored.Results) != units {
		t.Errorf("stored input has %d results, want %d (file lines × units)", len(stored.Results), units)
	}
	if _, err := (CommitResolver{DB: path}).Resolve(ctx, "feedface"); !errors.Is(err, compare.ErrNotFound) {
		t.Errorf("unknown commit: %v, want compare.ErrNotFound", err)
	}
}
