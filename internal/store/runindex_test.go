package store

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Listings are answered by SQL: on a store of many runs, asking for the
// newest few that match a filter reads those few rows from the database,
// and the answer is the one filtering everything would give.

const (
	manyRuns    = 4000
	manyTargets = 40
)

// fillRunIndex indexes manyRuns profiling runs in one transaction (a
// fixture, not a measure of SaveProfileRun): run i is of target i %
// manyTargets, started i minutes after epoch, on commit i % 7, dirty when
// i % 3 == 0.
func fillRunIndex(t *testing.T, s *DB) {
	t.Helper()
	ctx := context.Background()
	tx, err := s.b.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, s.b.q(`INSERT INTO profile_runs (`+profileRunCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'v0', 100, 0, 50, 1, 2, 6, FALSE, 'main', 'a subject', 'An Author')`))
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	for i := range manyRuns {
		start := epoch.Add(time.Duration(i) * time.Minute)
		if _, err := ins.ExecContext(ctx, runID(i), "/runs/"+runID(i), target(i%manyTargets), nanos(start), nanos(start.Add(30*time.Second)),
			fmt.Sprintf("%040d", i%7), i%3 == 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func runID(i int) string  { return fmt.Sprintf("run-%05d", i) }
func target(i int) string { return fmt.Sprintf("http://svc-%02d.example:8080/", i) }

// rowsReadBy returns how many rows f's queries read from the database.
func rowsReadBy(s *DB, f func()) int64 {
	before := s.b.rowsRead.Load()
	f()
	return s.b.rowsRead.Load() - before
}

func testRunIndexListsFromSQL(t *testing.T, s *DB) {
	ctx := context.Background()
	fillRunIndex(t, s)

	// The runs of target 7, newest first, as filtering everything in
	// memory would find them.
	var want []string
	for i := manyRuns - 1; i >= 0; i-- {
		if i%manyTargets == 7 {
			want = append(want, runID(i))
		}
	}
	var got []string
	var pages int
	f := RunFilter{Target: target(7), Limit: 25}
	for {
		var page []ProfileRun
		var err error
		read := rowsReadBy(s, func() { page, err = s.ProfileRuns(ctx, f) })
		if err != nil {
			t.Fatal(err)
		}
		// A page reads its own rows, and the run it continues after.
		wantRead := int64(len(page))
		if f.After != "" {
			wantRead++
		}
		if read != wantRead {
			t.Errorf("page %d (%d runs) read %d rows from the database; want %d", pages, len(page), read, wantRead)
		}
		for _, p := range page {
			if p.Target != f.Target {
				t.Fatalf("run %s of %s listed for %s", p.ID, p.Target, f.Target)
			}
			got = append(got, p.ID)
		}
		if len(page) < f.Limit {
			break
		}
		pages++
		f.After = page[len(page)-1].ID
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the pages list %d runs (%.3q ...); want the %d of the target newest first (%.3q ...)", len(got), got, len(want), want)
	}

	// The newest runs of one commit, dirty and clean.
	commit := fmt.Sprintf("%040d", 4)
	for _, dirty := range []bool{true, false} {
		var want []string
		for i := manyRuns - 1; i >= 0 && len(want) < 3; i-- {
			if i%7 == 4 && (i%3 == 0) == dirty {
				want = append(want, runID(i))
			}
		}
		ref := commit
		if dirty {
			ref += dirtySuffix
		}
		rs, err := s.ProfileRuns(ctx, RunFilter{Commit: ref, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rs {
			if r.Commit != commit || r.Dirty != dirty {
				t.Errorf("run %s of %s (dirty %v) listed for %s", r.ID, r.Commit, r.Dirty, ref)
			}
			got = append(got, r.ID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("newest runs of %s = %q; want %q", ref, got, want)
		}
	}
	var err error
	var since []ProfileRun
	read := rowsReadBy(s, func() {
		since, err = s.ProfileRuns(ctx, RunFilter{Since: epoch.Add((manyRuns - 5) * time.Minute)})
	})
	if err != nil || len(since) != 5 || since[4].ID != runID(manyRuns-5) || read != 5 {
		t.Errorf("runs since the fifth newest = %d runs (read %d rows), %v", len(since), read, err)
	}
	if _, err := s.ProfileRuns(ctx, RunFilter{After: "no-such-run"}); err == nil || !strings.Contains(err.Error(), "no-such-run") {
		t.Errorf("listing after an unknown run: %v; want an error naming it", err)
	}
}

// fillBenchHistory records commits runs of one benchmark: commit i on
// branch main when i is even, feature when odd, with commit times in
// reverse of insertion order every tenth commit so that the two orders
// differ; every third commit has a second run, on machine B.
func fillBenchHistory(t *testing.T, s *DB, commits int) {
	t.Helper()
	ctx := context.Background()
	for i := range commits {
		branch := "main"
		if i%2 == 1 {
			branch = "feature"
		}
		at := epoch.Add(time.Duration(i) * time.Hour)
		if i%10 == 9 {
			at = epoch.Add(-time.Duration(i) * time.Hour)
		}
		machines := []Machine{machineA}
		if i%3 == 0 {
			machines = append(machines, machineB)
		}
		for _, m := range machines {
			r := BenchRun{Commit: fmt.Sprintf("%040x", i+1), Branch: branch, CommitTime: at, Time: at, Machine: m,
				Package: "example.com/many", Results: parseBench(t, fmt.Sprintf("BenchmarkMany-8 100 %d ns/op\n", 100+i))}
			if _, err := s.SaveBenchRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func testBenchHistoryLimitsInSQL(t *testing.T, s *DB) {
	ctx := context.Background()
	const commits = 120
	fillBenchHistory(t, s, commits)
	key := SeriesKey{Package: "example.com/many", Name: "Many-8", Unit: "sec/op"}
	for _, tc := range []struct {
		f Filter
		// limits says the limit leaves commits out, so that the
		// test shows it applied.
		limits bool
	}{
		{Filter{Branch: "main", Limit: 10}, true},
		{Filter{Branch: "main", Limit: 10, Order: ByInsertion}, true},
		{Filter{Machine: machineB.Hostname, Limit: 7}, true},
		{Filter{Since: epoch.Add(50 * time.Hour), Limit: 4}, true},
		{Filter{Limit: 1000}, false},
	} {
		f := tc.f
		all := f
		all.Limit = 0
		// Without a limit, every matching run is read: the reference.
		everything, err := s.Commits(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		if tc.limits != (len(everything) > f.Limit) {
			t.Fatalf("%+v: %d commits match; the test means the limit to apply: %v", f, len(everything), tc.limits)
		}
		wantCommits := everything[max(0, len(everything)-f.Limit):]
		wantRuns := 0
		for _, c := range wantCommits {
			wantRuns += c.Runs
		}
		var got []Commit
		read := rowsReadBy(s, func() { got, err = s.Commits(ctx, f) })
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantCommits) {
			t.Errorf("Commits(%+v) = %d commits, not the latest %d of the %d that match", f, len(got), len(wantCommits), len(everything))
		}
		if read != int64(wantRuns) {
			t.Errorf("Commits(%+v) read %d rows; want the %d runs of the %d commits it returns", f, read, wantRuns, len(wantCommits))
		}

		series, err := s.Series(ctx, key, all)
		if err != nil {
			t.Fatal(err)
		}
		wantPoints := series[max(0, len(series)-f.Limit):]
		var points []SeriesPoint
		read = rowsReadBy(s, func() { points, err = s.Series(ctx, key, f) })
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(points, wantPoints) {
			t.Errorf("Series(%+v) = %d points, not the latest %d of the %d that match", f, len(points), len(wantPoints), len(series))
		}
		if read != int64(wantRuns) {
			t.Errorf("Series(%+v) read %d rows; want the %d runs of its %d points", f, read, wantRuns, len(points))
		}
	}
}

func TestSQLiteListsFromSQL(t *testing.T) {
	t.Run("RunIndex", func(t *testing.T) {
		s, _ := openTestSQLite(t)
		testRunIndexListsFromSQL(t, s)
		// The database itself reads only the target's runs, from an
		// index, rather than scanning the table.
		p := queryPlan(t, s, `SELECT `+profileRunCols+` FROM profile_runs WHERE start_time >= 0 AND target = ? ORDER BY start_time DESC, id LIMIT 10`, target(7))
		if !strings.Contains(p, "profile_runs_target") || strings.Contains(p, "SCAN profile_runs") {
			t.Errorf("the newest runs of a target are found by %q; want a search of index profile_runs_target", p)
		}
	})
	t.Run("BenchHistory", func(t *testing.T) {
		s, _ := openTestSQLite(t)
		testBenchHistoryLimitsInSQL(t, s)
	})
	t.Run("Rollups", func(t *testing.T) {
		// What a merge reads of rollups to know they are up to date
		// comes from their index alone: the table's row would read the
		// whole rollup first.
		s, _ := openTestSQLite(t)
		q, args := inList(rollupCountsQuery, []uint64{1, 2, 3}, resolutionRollup, 0, 1)
		if p := queryPlan(t, s, q, args...); !strings.Contains(p, "COVERING INDEX prof_blocks_rollups") {
			t.Errorf("the rollups' counts of scrapes are read by %q; want the covering index prof_blocks_rollups", p)
		}
	})
}

// queryPlan is how SQLite says it runs q with args, its steps joined.
func queryPlan(t *testing.T, s *DB, q string, args ...any) string {
	t.Helper()
	var plan []string
	err := s.b.each(context.Background(), `EXPLAIN QUERY PLAN `+q, args, func(rows *sql.Rows) error {
		var id, parent, notused int
		var detail string
		err := rows.Scan(&id, &parent, &notused, &detail)
		plan = append(plan, detail)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}

func TestPostgresListsFromSQL(t *testing.T) {
	t.Run("RunIndex", func(t *testing.T) {
		s, _ := openTestPostgres(t)
		testRunIndexListsFromSQL(t, s)
	})
	t.Run("BenchHistory", func(t *testing.T) {
		s, _ := openTestPostgres(t)
		testBenchHistoryLimitsInSQL(t, s)
	})
}
