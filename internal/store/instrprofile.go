package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/perfscope/perfscope/internal/bench"
)

// An InstructionProfile is one benchmark's per-operation instruction
// profile as a run recorded it beside its instructions/op: a gzipped pprof
// profile of exact counts by function and source line (see
// bench.EncodeInstructionProfile), at most
// bench.MaxInstructionProfileBytes.
type InstructionProfile struct {
	// RunID is the benchmark run that recorded it.
	RunID int64 `json:"run_id"`
	// Package and Name are the benchmark's, as its series have them.
	Package string `json:"package"`
	Name    string `json:"name"`
	// Data is the profile; InstructionProfiles leaves it out, and
	// InstructionProfileData reads it.
	Data []byte `json:"-"`
}

// ErrNoInstructionProfile means a run recorded no instruction profile of
// the benchmark asked for.
var ErrNoInstructionProfile = errors.New("no instruction profile")

// instructionProfilesOf encodes the profiles of a run's counted
// benchmarks, under the names its samples are stored by.
func instructionProfilesOf(rec *bench.RunRecord, defaultPkg string) ([]InstructionProfile, error) {
	var out []InstructionProfile
	for _, cb := range rec.Counted {
		if cb == nil || cb.Result == nil {
			continue
		}
		data, err := bench.EncodeInstructionProfile(cb)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cb.Result.Name, err)
		}
		if data == nil {
			continue
		}
		pkg := cb.Result.GetConfig("pkg")
		if pkg == "" {
			pkg = defaultPkg
		}
		out = append(out, InstructionProfile{Package: pkg, Name: cb.Result.Name.String(), Data: data})
	}
	return out, nil
}

// saveInstructionProfiles adds a run's profiles in its transaction.
func (h *BenchHistory) saveInstructionProfiles(ctx context.Context, tx *sql.Tx, runID int64, profiles []InstructionProfile) error {
	if len(profiles) == 0 {
		return nil
	}
	ins, err := tx.PrepareContext(ctx, h.b.q(`INSERT INTO bench_instr_profiles (run_id, package, name, data) VALUES (?, ?, ?, ?)`))
	if err != nil {
		return err
	}
	defer ins.Close()
	seen := make(map[[2]string]bool)
	for _, p := range profiles {
		if len(p.Data) > bench.MaxInstructionProfileBytes {
			return fmt.Errorf("instruction profile of %s %s: %d bytes, more than %d", p.Package, p.Name, len(p.Data), bench.MaxInstructionProfileBytes)
		}
		if k := [2]string{p.Package, p.Name}; seen[k] {
			return fmt.Errorf("instruction profile of %s %s given twice", p.Package, p.Name)
		} else {
			seen[k] = true
		}
		if _, err := ins.ExecContext(ctx, runID, p.Package, p.Name, p.Data); err != nil {
			return fmt.Errorf("instruction profile of %s %s: %w", p.Package, p.Name, err)
		}
	}
	return nil
}

// InstructionProfiles lists, for every benchmark of commit c that f
// selects (branch, machine, package and name), the instruction profile of
// its latest run that recorded one, without its data. A benchmark counted
// only by runs that kept no profile (counted before profiles were kept,
// or uploaded as a results file) is not listed.
func (h *BenchHistory) InstructionProfiles(ctx context.Context, c Commit, f Filter) ([]InstructionProfile, error) {
	match, err := newNameMatcher(f)
	if err != nil {
		return nil, err
	}
	q := benchRuns(f).where("r.commit_hash = ? AND r.dirty = ?", c.Hash, c.Dirty)
	q.from += ` JOIN bench_instr_profiles p ON p.run_id = r.id`
	from, args := q.sql()
	latest := make(map[[2]string]int)
	var out []InstructionProfile
	err = h.b.each(ctx, `SELECT r.id, p.package, p.name`+from+` ORDER BY r.id`, args, func(rows *sql.Rows) error {
		var p InstructionProfile
		if err := rows.Scan(&p.RunID, &p.Package, &p.Name); err != nil {
			return err
		}
		if !match.match(SeriesKey{Package: p.Package, Name: p.Name, Unit: bench.UnitInstructions}) {
			return nil
		}
		k := [2]string{p.Package, p.Name}
		if i, ok := latest[k]; ok {
			out[i] = p
			return nil
		}
		latest[k] = len(out)
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("instruction profiles of %s: %w", c.Ref(), err)
	}
	return out, nil
}

// InstructionProfileData reads the instruction profile run runID
// recorded of one benchmark; ErrNoInstructionProfile when it recorded
// none.
func (h *BenchHistory) InstructionProfileData(ctx context.Context, runID int64, pkg, name string) ([]byte, error) {
	var data []byte
	err := h.b.db.QueryRowContext(ctx, h.b.q(`SELECT data FROM bench_instr_profiles WHERE run_id = ? AND package = ? AND name = ?`),
		runID, pkg, name).Scan(&data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("%w of %s %s in run %d", ErrNoInstructionProfile, pkg, name, runID)
	case err != nil:
		return nil, fmt.Errorf("instruction profile of %s %s in run %d: %w", pkg, name, runID, err)
	}
	return data, nil
}
