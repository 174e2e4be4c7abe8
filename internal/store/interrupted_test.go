package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestInterruptedRuns: a run stopped early is stored with its mark, and a
// commit counts its interrupted runs, in its listing and in each point of
// a series.
func TestInterruptedRuns(t *testing.T) {
	for name, open := range map[string]func(testing.TB) (*DB, string){"sqlite": openTestSQLite, "postgres": openTestPostgres} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, _ := open(t)
			for _, r := range []struct {
				commit      string
				at          int
				interrupted bool
			}{{"c1aaaaaaaa", 0, false}, {"c1aaaaaaaa", 0, true}, {"c2bbbbbbbb", 1, false}} {
				run := BenchRun{Commit: r.commit, Branch: "main", Machine: machineA, CommitTime: epoch.Add(time.Duration(r.at) * time.Hour),
					Results: parseBench(t, benchText(3, 1)), Interrupted: r.interrupted}
				if _, err := s.SaveBenchRun(ctx, run); err != nil {
					t.Fatal(err)
				}
			}
			cs, err := s.Commits(ctx, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			points, err := s.Series(ctx, SeriesKey{Package: "example.com/b", Name: "Encode-8", Unit: "sec/op"}, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			for what, got := range map[string][]Commit{"commits": cs, "series": commitsOf(points)} {
				var runs []string
				for _, c := range got {
					runs = append(runs, fmt.Sprintf("%s: %d of %d interrupted", c.Hash, c.Interrupted, c.Runs))
				}
				if want := "c1aaaaaaaa: 1 of 2 interrupted, c2bbbbbbbb: 0 of 1 interrupted"; strings.Join(runs, ", ") != want {
					t.Errorf("%s: %s, want %s", what, strings.Join(runs, ", "), want)
				}
			}
		})
	}
}

func commitsOf(points []SeriesPoint) []Commit {
	var cs []Commit
	for _, p := range points {
		cs = append(cs, p.Commit)
	}
	return cs
}

// TestMigrateInterrupted: runs recorded before runs were marked
// interrupted read as not interrupted once the database is upgraded.
func TestMigrateInterrupted(t *testing.T) {
	ctx := context.Background()
	path := oldSQLite(t, 3, `INSERT INTO machines VALUES (1, 'h', 'linux', 'amd64', 'cpu')`,
		`INSERT INTO bench_runs VALUES (1, 'c0ffee0000', 'main', FALSE, 1, 2, 1, 1, 'go1.26.8', '')`)

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cs, err := s.Commits(ctx, Filter{})
	if err != nil || len(cs) != 1 || cs[0].Runs != 1 || cs[0].Interrupted != 0 {
		t.Errorf("commits after the upgrade: %+v, %v; want the old run, not interrupted", cs, err)
	}
}
