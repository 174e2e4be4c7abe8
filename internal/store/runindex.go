package store

import (
	"context"
	"fmt"
	"sync"
)

// runIndex keeps the metadata of every benchmark run in memory. A series
// read then touches only the samples table's primary key range: joining
// 5,000 samples rows to their runs costs several times more than reading
// them, and the dashboard reads many series between two ingests. Runs are
// never updated or deleted, so the index is current as long as the number
// of runs and the highest id are unchanged (both, because with PostgreSQL a
// lower id can commit after a higher one).
type runIndex struct {
	mu           sync.Mutex
	maxID, count int64
	runs         []runRow // in increasing id order; replaced, never modified
	byID         map[int64]int
}

// loadRuns returns all runs and an index of them by id, from memory when no
// run was added since the last call. Callers must not modify them.
func (s *sqlStore) loadRuns(ctx context.Context) ([]runRow, map[int64]int, error) {
	var maxID, count int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0), COUNT(*) FROM bench_runs`).Scan(&maxID, &count); err != nil {
		return nil, nil, fmt.Errorf("read runs: %w", err)
	}
	idx := &s.runIdx
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if idx.byID != nil && idx.maxID == maxID && idx.count == count {
		return idx.runs, idx.byID, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+runCols+` FROM bench_runs r JOIN machines m ON m.id = r.machine_id ORDER BY r.id`)
	if err != nil {
		return nil, nil, fmt.Errorf("read runs: %w", err)
	}
	defer rows.Close()
	runs := make([]runRow, 0, count)
	byID := make(map[int64]int, count)
	for rows.Next() {
		var r runRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, nil, fmt.Errorf("read runs: %w", err)
		}
		byID[r.id] = len(runs)
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read runs: %w", err)
	}
	// A run committed between the check and the read is in runs but not
	// in the key: the next call reloads, which is merely wasteful.
	idx.maxID, idx.count, idx.runs, idx.byID = maxID, count, runs, byID
	return runs, byID, nil
}

// matchRun reports whether run r passes f's branch, machine and time filters.
func (f Filter) matchRun(r *runRow) bool {
	return (f.Branch == "" || r.branch == f.Branch) &&
		(f.Machine == "" || r.host == f.Machine) &&
		(f.Since.IsZero() || r.sortAt >= nanos(f.Since))
}
