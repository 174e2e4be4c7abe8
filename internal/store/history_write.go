package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/perfscope/perfscope/internal/gitstate"
)

// SaveBenchRun stores one benchmark run with all its samples, in one
// transaction, and returns the run's id.
func (h *BenchHistory) SaveBenchRun(ctx context.Context, saved BenchRun) (int64, error) {
	if saved.Commit == "" {
		return 0, errors.New("save benchmark run: no commit (results are kept per commit)")
	}
	keys, values := groupSamples(saved)
	if len(keys) == 0 {
		return 0, errors.New("save benchmark run: no benchmark results")
	}
	if saved.Time.IsZero() {
		saved.Time = time.Now()
	}
	sortTime := saved.CommitTime
	if sortTime.IsZero() {
		sortTime = saved.Time
	}

	tx, err := h.b.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("save benchmark run: %w", err)
	}
	defer tx.Rollback()

	machineID, err := h.machineID(ctx, tx, saved.Machine)
	if err != nil {
		return 0, fmt.Errorf("save benchmark run: %w", err)
	}
	var runID int64
	err = tx.QueryRowContext(ctx, h.b.q(`INSERT INTO bench_runs
		(commit_hash, branch, dirty, commit_time, run_time, sort_time, machine_id, go_version, package, interrupted, subject, author)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		saved.Commit, saved.Branch, saved.Dirty, nanos(saved.CommitTime), nanos(saved.Time), nanos(sortTime),
		machineID, saved.GoVersion, saved.Package, saved.Interrupted,
		gitstate.OneLine(saved.Subject, gitstate.MaxSubject), gitstate.OneLine(saved.Author, gitstate.MaxAuthor)).Scan(&runID)
	if err != nil {
		return 0, fmt.Errorf("save benchmark run: %w", err)
	}
	ids, err := h.seriesIDs(ctx, tx, keys)
	if err != nil {
		return 0, fmt.Errorf("save benchmark run: %w", err)
	}
	if err := h.markSeen(ctx, tx, ids, saved.Branch, machineID); err != nil {
		return 0, fmt.Errorf("save benchmark run: %w", err)
	}
	ins, err := tx.PrepareContext(ctx, h.b.q(`INSERT INTO samples (series_id, run_id, n, vals) VALUES (?, ?, ?, ?)`))
	if err != nil {
		return 0, fmt.Errorf("save benchmark run: %w", err)
	}
	defer ins.Close()
	for i, k := range keys {
		if _, err := ins.ExecContext(ctx, ids[i], runID, len(values[k]), encodeValues(values[k])); err != nil {
			return 0, fmt.Errorf("save benchmark run: samples of %s %s: %w", k.Name, k.Unit, err)
		}
	}
	if err := h.saveInstructionProfiles(ctx, tx, runID, saved.InstructionProfiles); err != nil {
		return 0, fmt.Errorf("save benchmark run: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("save benchmark run: commit: %w", err)
	}
	return runID, nil
}

// groupSamples collects the values of run's result lines per benchmark
// metric, in the order the metrics first appear.
func groupSamples(saved BenchRun) ([]SeriesKey, map[SeriesKey][]float64) {
	var keys []SeriesKey
	values := make(map[SeriesKey][]float64)
	for _, r := range saved.Results {
		if r == nil {
			continue
		}
		pkg := r.GetConfig("pkg")
		if pkg == "" {
			pkg = saved.Package
		}
		for _, v := range r.Values {
			k := SeriesKey{Package: pkg, Name: r.Name.String(), Unit: v.Unit}
			if _, ok := values[k]; !ok {
				keys = append(keys, k)
			}
			values[k] = append(values[k], v.Value)
		}
	}
	return keys, values
}

// machineID returns the id of m, adding it on first sight. The insert
// ignores a conflict so that two writers adding the same machine both
// succeed (PostgreSQL runs them concurrently).
func (h *BenchHistory) machineID(ctx context.Context, tx *sql.Tx, m Machine) (int64, error) {
	if _, err := tx.ExecContext(ctx, h.b.q(`INSERT INTO machines (hostname, goos, goarch, cpu) VALUES (?, ?, ?, ?)
		ON CONFLICT (hostname, goos, goarch, cpu) DO NOTHING`), m.Hostname, m.GOOS, m.GOARCH, m.CPU); err != nil {
		return 0, fmt.Errorf("add machine: %w", err)
	}
	var id int64
	err := tx.QueryRowContext(ctx, h.b.q(`SELECT id FROM machines WHERE hostname = ? AND goos = ? AND goarch = ? AND cpu = ?`),
		m.Hostname, m.GOOS, m.GOARCH, m.CPU).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("find machine: %w", err)
	}
	return id, nil
}

// seriesIDs returns the id of each key, adding the new ones. Known ids are
// read per package first: nearly every run repeats the benchmarks of the
// previous one, so inserts are rare.
func (h *BenchHistory) seriesIDs(ctx context.Context, tx *sql.Tx, keys []SeriesKey) ([]int64, error) {
	known := make(map[SeriesKey]int64)
	loaded := make(map[string]bool)
	for _, k := range keys {
		if loaded[k.Package] {
			continue
		}
		loaded[k.Package] = true
		rows, err := tx.QueryContext(ctx, h.b.q(`SELECT id, name, unit FROM series WHERE package = ?`), k.Package)
		if err != nil {
			return nil, fmt.Errorf("read benchmarks: %w", err)
		}
		for rows.Next() {
			var id int64
			kk := SeriesKey{Package: k.Package}
			if err := rows.Scan(&id, &kk.Name, &kk.Unit); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read benchmarks: %w", err)
			}
			known[kk] = id
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read benchmarks: %w", err)
		}
	}
	ids := make([]int64, len(keys))
	for i, k := range keys {
		if id, ok := known[k]; ok {
			ids[i] = id
			continue
		}
		if _, err := tx.ExecContext(ctx, h.b.q(`INSERT INTO series (package, name, unit) VALUES (?, ?, ?)
			ON CONFLICT (package, name, unit) DO NOTHING`), k.Package, k.Name, k.Unit); err != nil {
			return nil, fmt.Errorf("add benchmark %s: %w", k.Name, err)
		}
		if err := tx.QueryRowContext(ctx, h.b.q(`SELECT id FROM series WHERE package = ? AND name = ? AND unit = ?`),
			k.Package, k.Name, k.Unit).Scan(&ids[i]); err != nil {
			return nil, fmt.Errorf("find benchmark %s: %w", k.Name, err)
		}
	}
	return ids, nil
}

// markSeen records that the series have results on branch and machine, so
// Benchmarks can filter by them without reading the samples.
func (h *BenchHistory) markSeen(ctx context.Context, tx *sql.Tx, ids []int64, branch string, machineID int64) error {
	seen := make(map[int64]bool)
	rows, err := tx.QueryContext(ctx, h.b.q(`SELECT series_id FROM series_seen WHERE branch = ? AND machine_id = ?`), branch, machineID)
	if err != nil {
		return fmt.Errorf("read seen benchmarks: %w", err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("read seen benchmarks: %w", err)
		}
		seen[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read seen benchmarks: %w", err)
	}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		if _, err := tx.ExecContext(ctx, h.b.q(`INSERT INTO series_seen (series_id, branch, machine_id) VALUES (?, ?, ?)
			ON CONFLICT (series_id, branch, machine_id) DO NOTHING`), id, branch, machineID); err != nil {
			return fmt.Errorf("mark benchmark seen: %w", err)
		}
		seen[id] = true
	}
	return nil
}

// encodeValues packs samples as little-endian float64s: exact, compact and
// the same bytes in both engines.
func encodeValues(vals []float64) []byte {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

// decodeValues appends the samples packed in b to dst.
func decodeValues(dst []float64, b []byte) ([]float64, error) {
	if len(b)%8 != 0 {
		return dst, fmt.Errorf("corrupt samples: %d bytes is not a whole number of values", len(b))
	}
	// One allocation per commit instead of append's doublings: a
	// series read decodes thousands of these.
	dst = slices.Grow(dst, len(b)/8)
	for i := 0; i < len(b); i += 8 {
		dst = append(dst, math.Float64frombits(binary.LittleEndian.Uint64(b[i:])))
	}
	return dst, nil
}
