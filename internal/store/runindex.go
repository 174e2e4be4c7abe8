package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/run"
)

// A RunIndex is the index of saved profiling runs: what the run list and
// the dashboard show of each run without reading its directory. It is one
// of the kinds of data a DB keeps.
type RunIndex struct{ b *sqlDB }

// A ProfileRun is the index entry of a saved profiling run; the profiles
// themselves stay in Dir.
type ProfileRun struct {
	ID     string    `json:"id"`
	Dir    string    `json:"dir"`
	Target string    `json:"target"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Commit string    `json:"git_commit,omitempty"`
	Dirty  bool      `json:"git_dirty,omitempty"`
	// Branch, Subject and Author are the commit's, as the run recorded
	// them; "" when it did not.
	Branch    string  `json:"git_branch,omitempty"`
	Subject   string  `json:"git_subject,omitempty"`
	Author    string  `json:"git_author,omitempty"`
	Version   string  `json:"perfscope_version"`
	Requests  int64   `json:"requests"`
	Failures  int64   `json:"failures"`
	RPS       float64 `json:"throughput_rps"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	ProfileOK int     `json:"profiles"` // profiles saved without error
	// LoadFailed is the load's verdict (loadgen.Health.Failed), judged
	// by the threshold the run was made with.
	LoadFailed bool `json:"load_failed"`
}

// A RunFilter selects profiling runs. Zero fields do not filter. Runs are
// listed newest first: by start time, latest first, then by id.
type RunFilter struct {
	Since  time.Time // runs started at or after
	Target string    // runs of this target URL, exactly as the run recorded it
	// Commit selects the runs made on one commit: its full hash, with
	// "+dirty" appended for runs made on a modified work tree of it (as
	// Commit.Ref prints it).
	Commit string
	// After continues a listing from the run with this id, the last of
	// the previous page: the runs listed after it. An id the index does
	// not hold is an error wrapping ErrUnknownRun.
	After string
	Limit int // at most this many runs, the newest
}

// ErrUnknownRun is returned by ProfileRun and DeleteProfileRun when no run
// has the id.
var ErrUnknownRun = errors.New("unknown run")

const profileRunCols = `id, dir, target, start_time, end_time, commit_hash, dirty, version,
	requests, failures, rps, p50_ms, p99_ms, profiles, load_failed, branch, subject, author`

// scanProfileRun reads one row of profileRunCols.
func scanProfileRun(row interface{ Scan(...any) error }) (ProfileRun, error) {
	var p ProfileRun
	var start, end int64
	err := row.Scan(&p.ID, &p.Dir, &p.Target, &start, &end, &p.Commit, &p.Dirty, &p.Version,
		&p.Requests, &p.Failures, &p.RPS, &p.P50Ms, &p.P99Ms, &p.ProfileOK, &p.LoadFailed, &p.Branch, &p.Subject, &p.Author)
	p.Start, p.End = fromNanos(start), fromNanos(end)
	return p, err
}

// conds returns the SQL conditions f places on a profiling run, the run
// after which the listing continues being after (nil to start at the
// newest).
func (f RunFilter) conds(after *ProfileRun) (string, []any) {
	conds := []string{"start_time >= ?"}
	args := []any{nanos(f.Since)}
	if f.Target != "" {
		conds = append(conds, "target = ?")
		args = append(args, f.Target)
	}
	if f.Commit != "" {
		hash, dirty := strings.CutSuffix(f.Commit, dirtySuffix)
		conds = append(conds, "commit_hash = ? AND dirty = ?")
		args = append(args, hash, dirty)
	}
	if after != nil {
		start := nanos(after.Start)
		conds = append(conds, "(start_time < ? OR (start_time = ? AND id > ?))")
		args = append(args, start, start, after.ID)
	}
	return strings.Join(conds, " AND "), args
}

// ProfileRuns lists the newest indexed profiling runs that f selects, at
// most f.Limit of them: SQL selects, orders and limits them, so a page costs
// what it returns, however many runs the index holds.
func (x *RunIndex) ProfileRuns(ctx context.Context, f RunFilter) ([]ProfileRun, error) {
	var after *ProfileRun
	if f.After != "" {
		p, err := x.ProfileRun(ctx, f.After)
		if err != nil {
			return nil, fmt.Errorf("list profiling runs after %s: %w", f.After, err)
		}
		after = &p
	}
	cond, args := f.conds(after)
	query := `SELECT ` + profileRunCols + ` FROM profile_runs WHERE ` + cond + ` ORDER BY start_time DESC, id`
	if f.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	var out []ProfileRun
	err := x.b.each(ctx, query, args, func(rows *sql.Rows) error {
		p, err := scanProfileRun(rows)
		out = append(out, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list profiling runs: %w", err)
	}
	return out, nil
}

// ProfileRun returns the index entry of one profiling run, or an error
// wrapping ErrUnknownRun.
func (x *RunIndex) ProfileRun(ctx context.Context, id string) (ProfileRun, error) {
	p, err := scanProfileRun(x.b.db.QueryRowContext(ctx, x.b.q(`SELECT `+profileRunCols+` FROM profile_runs WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return ProfileRun{}, fmt.Errorf("%w %s", ErrUnknownRun, id)
	}
	if err != nil {
		return ProfileRun{}, fmt.Errorf("find profiling run %s: %w", id, err)
	}
	x.b.rowsRead.Add(1)
	return p, nil
}

// DeleteProfileRun removes one profiling run from the index, or returns an
// error wrapping ErrUnknownRun. Its directory is the caller's to remove.
func (x *RunIndex) DeleteProfileRun(ctx context.Context, id string) error {
	res, err := x.b.db.ExecContext(ctx, x.b.q(`DELETE FROM profile_runs WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("delete profiling run %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("%w %s", ErrUnknownRun, id)
	}
	return nil
}

// SaveProfileRun indexes a saved profiling run by its id; saving the same id
// again replaces the entry.
func (x *RunIndex) SaveProfileRun(ctx context.Context, saved *run.Run) error {
	if saved == nil || saved.ID == "" {
		return errors.New("index profiling run: no run id")
	}
	var requests, failures int64
	var rps, p50, p99 float64
	failed := false
	if l := saved.Load; l != nil {
		requests, failures, rps = l.Requests, l.Failures, l.Throughput
		p50, p99 = l.Latency.P50, l.Latency.P99
		h := l.Health
		if h == nil {
			// Results saved before loads were judged: by the default.
			h = loadgen.Assess(l, 0)
		}
		failed = h.Failed
	}
	profiles := 0
	for _, p := range saved.Profiles {
		if p.Error == "" && p.File != "" {
			profiles++
		}
	}
	// The index outlives the working directory it was written from.
	dir := saved.Dir
	if abs, err := filepath.Abs(dir); err == nil && dir != "" {
		dir = abs
	}
	_, err := x.b.db.ExecContext(ctx, x.b.q(`INSERT INTO profile_runs
		(id, dir, target, start_time, end_time, commit_hash, dirty, version, requests, failures, rps, p50_ms, p99_ms, profiles, load_failed, branch, subject, author)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET dir = excluded.dir, target = excluded.target,
			start_time = excluded.start_time, end_time = excluded.end_time,
			commit_hash = excluded.commit_hash, dirty = excluded.dirty, version = excluded.version,
			requests = excluded.requests, failures = excluded.failures, rps = excluded.rps,
			p50_ms = excluded.p50_ms, p99_ms = excluded.p99_ms, profiles = excluded.profiles,
			load_failed = excluded.load_failed, branch = excluded.branch, subject = excluded.subject,
			author = excluded.author`),
		saved.ID, dir, saved.Target, nanos(saved.Start), nanos(saved.End), saved.GitCommit, saved.GitDirty, saved.Version,
		requests, failures, rps, p50, p99, profiles, failed, saved.GitBranch,
		gitstate.OneLine(saved.GitSubject, gitstate.MaxSubject), gitstate.OneLine(saved.GitAuthor, gitstate.MaxAuthor))
	if err != nil {
		return fmt.Errorf("index profiling run %s: %w", saved.ID, err)
	}
	return nil
}
