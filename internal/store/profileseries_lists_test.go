package store

import (
	"context"
	"testing"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestKeptListsSeeRowsCommittedLate checks the series and processes a
// reader keeps in memory against rows committed out of the order of their
// ids, as two writers sharing a PostgreSQL commit them: a row whose id is
// below the newest already read is still seen, on each engine.
func TestKeptListsSeeRowsCommittedLate(t *testing.T) {
	for _, e := range testEngines {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			s, _ := e.open(t)
			if err := s.Append(ctx, scrapeAt(apiTarget, profseries.CPU, leftpadProfiles(t, profseries.CPU)[0], profEpoch)); err != nil {
				t.Fatal(err)
			}
			var key string
			if err := s.b.db.QueryRowContext(ctx, `SELECT labels FROM prof_series`).Scan(&key); err != nil {
				t.Fatal(err)
			}
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := s.b.db.ExecContext(ctx, s.b.q(q), args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			// A writer took id 1000 and committed; another took 500 and
			// has not yet.
			exec(`INSERT INTO prof_series (id, labels, type) VALUES (?, ?, ?)`, 1000, key, profseries.Heap)
			exec(`INSERT INTO prof_processes (id, build_id, generation) VALUES (?, ?, ?)`, 1000, "b", 1)
			all, err := s.allSeries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			procs, err := s.knownProcesses(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(all[profseries.Heap]) != 1 || len(all[profseries.Goroutine]) != 0 || procs[1000].BuildID != "b" {
				t.Fatalf("before the late rows: series %v, processes %v", all, procs)
			}
			exec(`INSERT INTO prof_series (id, labels, type) VALUES (?, ?, ?)`, 500, key, profseries.Goroutine)
			exec(`INSERT INTO prof_processes (id, build_id, generation) VALUES (?, ?, ?)`, 500, "a", 1)
			if all, err = s.allSeries(ctx); err != nil {
				t.Fatal(err)
			}
			if procs, err = s.knownProcesses(ctx); err != nil {
				t.Fatal(err)
			}
			if len(all[profseries.Goroutine]) != 1 || all[profseries.Goroutine][0].id != 500 {
				t.Errorf("the series committed late (id 500) is not listed: %v", all)
			}
			if procs[500].BuildID != "a" {
				t.Errorf("the process committed late (id 500) is not listed: %v", procs)
			}
		})
	}
}
