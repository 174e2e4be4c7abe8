package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// runConds returns the SQL conditions f places on a run r with machine m.
func runConds(f Filter) (string, []any) {
	var conds []string
	var args []any
	if f.Branch != "" {
		conds = append(conds, "r.branch = ?")
		args = append(args, f.Branch)
	}
	if f.Machine != "" {
		conds = append(conds, "m.hostname = ?")
		args = append(args, f.Machine)
	}
	if !f.Since.IsZero() {
		conds = append(conds, "r.sort_time >= ?")
		args = append(args, nanos(f.Since))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(conds, " AND "), args
}

// nameMatcher matches benchmarks against f's package and name expressions.
type nameMatcher struct{ pkg, name *regexp.Regexp }

func newNameMatcher(f Filter) (nameMatcher, error) {
	var m nameMatcher
	var err error
	if f.Package != "" {
		if m.pkg, err = regexp.Compile(f.Package); err != nil {
			return m, fmt.Errorf("package filter: %w", err)
		}
	}
	if f.Name != "" {
		if m.name, err = regexp.Compile(f.Name); err != nil {
			return m, fmt.Errorf("benchmark filter: %w", err)
		}
	}
	return m, nil
}

func (m nameMatcher) match(k SeriesKey) bool {
	return (m.pkg == nil || m.pkg.MatchString(k.Package)) && (m.name == nil || m.name.MatchString(k.Name))
}

// runRow is one run as the queries read it.
type runRow struct {
	id                          int64
	hash, branch, host          string
	dirty, interrupted          bool
	commitTime, runTime, sortAt int64
}

const runCols = `r.id, r.commit_hash, r.branch, m.hostname, r.dirty, r.interrupted, r.commit_time, r.run_time, r.sort_time`

func (r *runRow) dest() []any {
	return []any{&r.id, &r.hash, &r.branch, &r.host, &r.dirty, &r.interrupted, &r.commitTime, &r.runTime, &r.sortAt}
}

// commitKey identifies a commit: runs on a dirty tree of the same commit
// measured different code.
type commitKey struct {
	hash  string
	dirty bool
}

// commitAgg merges runs into commits, remembering the order they were seen.
type commitAgg struct {
	index   map[commitKey]int
	commits []Commit
	first   []int64 // id of each commit's first run, for ByInsertion
	sortAt  []int64
	samples []pointSamples // used by Series only
}

// pointSamples are one commit's samples while a series is read.
type pointSamples struct {
	runIDs []int64
	values []float64
}

// newCommitAgg returns an empty aggregate sized for about n commits: sized
// up front, because growing slices of Commit is most of a series read.
func newCommitAgg(n int) *commitAgg {
	return &commitAgg{
		index:   make(map[commitKey]int, n),
		commits: make([]Commit, 0, n),
		first:   make([]int64, 0, n),
		sortAt:  make([]int64, 0, n),
	}
}

// add merges run r, which must come in increasing id order, and returns the
// index of its commit.
func (a *commitAgg) add(r runRow) int {
	k := commitKey{r.hash, r.dirty}
	i, ok := a.index[k]
	if !ok {
		i = len(a.commits)
		a.index[k] = i
		t := fromNanos(r.commitTime)
		if t.IsZero() {
			t = fromNanos(r.runTime)
		}
		a.commits = append(a.commits, Commit{Hash: r.hash, Dirty: r.dirty, Branch: r.branch, Time: t, FirstRun: fromNanos(r.runTime)})
		a.first = append(a.first, r.id)
		a.sortAt = append(a.sortAt, r.sortAt)
		if a.samples != nil {
			a.samples = append(a.samples, pointSamples{})
		}
	}
	c := &a.commits[i]
	c.Runs++
	if r.interrupted {
		c.Interrupted++
	}
	if !slices.Contains(c.Machines, r.host) {
		c.Machines = append(c.Machines, r.host)
	}
	if rt := fromNanos(r.runTime); rt.After(c.LastRun) {
		c.LastRun = rt
	}
	return i
}

// order returns the commits' indexes in the order asked for, the latest
// limit of them when limit > 0.
func (a *commitAgg) order(o Order, limit int) []int {
	idx := make([]int, len(a.commits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool {
		i, j := idx[x], idx[y]
		if o == ByCommitTime && a.sortAt[i] != a.sortAt[j] {
			return a.sortAt[i] < a.sortAt[j]
		}
		return a.first[i] < a.first[j]
	})
	if limit > 0 && len(idx) > limit {
		idx = idx[len(idx)-limit:]
	}
	return idx
}

// Commits implements Store.
func (s *sqlStore) Commits(ctx context.Context, f Filter) ([]Commit, error) {
	runs, _, err := s.loadRuns(ctx)
	if err != nil {
		return nil, fmt.Errorf("list commits: %w", err)
	}
	agg := newCommitAgg(len(runs))
	for i := range runs {
		if f.matchRun(&runs[i]) {
			agg.add(runs[i])
		}
	}
	var out []Commit
	for _, i := range agg.order(f.Order, f.Limit) {
		out = append(out, agg.commits[i])
	}
	return out, nil
}

// Benchmarks implements Store. Since and Limit do not narrow it.
func (s *sqlStore) Benchmarks(ctx context.Context, f Filter) ([]Benchmark, error) {
	match, err := newNameMatcher(f)
	if err != nil {
		return nil, err
	}
	query := `SELECT DISTINCT s.package, s.name, s.unit FROM series s`
	var conds []string
	var args []any
	if f.Branch != "" || f.Machine != "" {
		query += ` JOIN series_seen x ON x.series_id = s.id JOIN machines m ON m.id = x.machine_id`
		if f.Branch != "" {
			conds = append(conds, "x.branch = ?")
			args = append(args, f.Branch)
		}
		if f.Machine != "" {
			conds = append(conds, "m.hostname = ?")
			args = append(args, f.Machine)
		}
	}
	if f.Unit != "" {
		conds = append(conds, "s.unit = ?")
		args = append(args, f.Unit)
	}
	if len(conds) > 0 {
		query += " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("list benchmarks: %w", err)
	}
	defer rows.Close()
	var keys []SeriesKey
	for rows.Next() {
		var k SeriesKey
		if err := rows.Scan(&k.Package, &k.Name, &k.Unit); err != nil {
			return nil, fmt.Errorf("list benchmarks: %w", err)
		}
		if match.match(k) {
			keys = append(keys, k)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list benchmarks: %w", err)
	}
	// Sorted here rather than in SQL: PostgreSQL's collation would order
	// names differently from SQLite's byte order.
	sortKeys(keys)
	var out []Benchmark
	for _, k := range keys {
		if n := len(out); n > 0 && out[n-1].Package == k.Package && out[n-1].Name == k.Name {
			out[n-1].Units = append(out[n-1].Units, k.Unit)
			continue
		}
		out = append(out, Benchmark{Package: k.Package, Name: k.Name, Units: []string{k.Unit}})
	}
	return out, nil
}

// Series implements Store. Package, Name and Unit of f are ignored: key
// names the metric.
func (s *sqlStore) Series(ctx context.Context, key SeriesKey, f Filter) ([]SeriesPoint, error) {
	var seriesID int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT id FROM series WHERE package = ? AND name = ? AND unit = ?`),
		key.Package, key.Name, key.Unit).Scan(&seriesID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("series %s %s: %w", key.Name, key.Unit, err)
	}
	runs, _, err := s.loadRuns(ctx)
	if err != nil {
		return nil, fmt.Errorf("series %s %s: %w", key.Name, key.Unit, err)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT run_id, vals FROM samples WHERE series_id = ? ORDER BY run_id`), seriesID)
	if err != nil {
		return nil, fmt.Errorf("series %s %s: %w", key.Name, key.Unit, err)
	}
	defer rows.Close()
	agg := newCommitAgg(len(runs))
	agg.samples = make([]pointSamples, 0, len(runs))
	var runID int64
	// vals is only decoded, never kept, so the driver's buffer is read
	// in place instead of copied for every row.
	var vals sql.RawBytes
	// Runs and samples both come in increasing run id order: one cursor
	// over runs finds each sample's run without a map lookup per row.
	ri := 0
	for rows.Next() {
		if err := rows.Scan(&runID, &vals); err != nil {
			return nil, fmt.Errorf("series %s %s: %w", key.Name, key.Unit, err)
		}
		for ri < len(runs) && runs[ri].id < runID {
			ri++
		}
		// A run missing from the index committed after it was read:
		// it belongs to the next read.
		if ri == len(runs) || runs[ri].id != runID || !f.matchRun(&runs[ri]) {
			continue
		}
		i := agg.add(runs[ri])
		p := &agg.samples[i]
		p.runIDs = append(p.runIDs, runID)
		if p.values, err = decodeValues(p.values, vals); err != nil {
			return nil, fmt.Errorf("series %s %s, run %d: %w", key.Name, key.Unit, runID, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("series %s %s: %w", key.Name, key.Unit, err)
	}
	order := agg.order(f.Order, f.Limit)
	out := make([]SeriesPoint, 0, len(order))
	for _, i := range order {
		out = append(out, SeriesPoint{Commit: agg.commits[i], RunIDs: agg.samples[i].runIDs, Values: agg.samples[i].values})
	}
	return out, nil
}

// CommitSamples implements Store.
func (s *sqlStore) CommitSamples(ctx context.Context, ref string, f Filter) (*CommitSamples, error) {
	hash, dirty, err := s.resolveCommit(ctx, ref)
	if err != nil {
		return nil, err
	}
	match, err := newNameMatcher(f)
	if err != nil {
		return nil, err
	}
	cond, args := runConds(f)
	if f.Unit != "" {
		cond += " AND se.unit = ?"
		args = append(args, f.Unit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+runCols+`, m.goos, m.goarch, m.cpu, r.go_version, se.package, se.name, se.unit, s.vals
		FROM bench_runs r JOIN machines m ON m.id = r.machine_id
		JOIN samples s ON s.run_id = r.id JOIN series se ON se.id = s.series_id
		WHERE r.commit_hash = ? AND r.dirty = ?`+cond+` ORDER BY r.id`),
		append([]any{hash, dirty}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("samples of %s: %w", ref, err)
	}
	defer rows.Close()
	agg := newCommitAgg(1)
	lastRun := int64(-1)
	index := make(map[SeriesKey]int)
	out := &CommitSamples{}
	var vals []byte
	var conf runConfig
	for rows.Next() {
		var r runRow
		var k SeriesKey
		var rc [len(runConfigKeys)]string
		if err := rows.Scan(append(r.dest(), &rc[0], &rc[1], &rc[2], &rc[3], &k.Package, &k.Name, &k.Unit, &vals)...); err != nil {
			return nil, fmt.Errorf("samples of %s: %w", ref, err)
		}
		if r.id != lastRun {
			agg.add(r)
			conf.add(rc)
			lastRun = r.id
		}
		if !match.match(k) {
			continue
		}
		i, ok := index[k]
		if !ok {
			i = len(out.Samples)
			index[k] = i
			out.Samples = append(out.Samples, SeriesSamples{SeriesKey: k})
		}
		if out.Samples[i].Values, err = decodeValues(out.Samples[i].Values, vals); err != nil {
			return nil, fmt.Errorf("samples of %s, run %d: %w", ref, r.id, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("samples of %s: %w", ref, err)
	}
	if len(agg.commits) == 0 {
		return nil, fmt.Errorf("%w %s: no runs of it match the filter", ErrUnknownCommit, ref)
	}
	out.Commit = agg.commits[0]
	out.Config = conf.shared()
	sort.Slice(out.Samples, func(i, j int) bool { return keyLess(out.Samples[i].SeriesKey, out.Samples[j].SeriesKey) })
	return out, nil
}

// runConfigKeys are the configuration keys of a run's benchmark output
// that the store keeps (in the machines and bench_runs tables), in the
// order CommitSamples selects them.
var runConfigKeys = [...]string{"goos", "goarch", "cpu", "go"}

// runConfig collects the configuration values of a commit's runs, to
// keep those all runs agree on.
type runConfig struct {
	values [len(runConfigKeys)]string
	differ [len(runConfigKeys)]bool
	runs   int
}

func (c *runConfig) add(v [len(runConfigKeys)]string) {
	for i := range v {
		if c.runs == 0 {
			c.values[i] = v[i]
		} else if c.values[i] != v[i] {
			c.differ[i] = true
		}
	}
	c.runs++
}

func (c *runConfig) shared() []ConfigValue {
	var out []ConfigValue
	for i, k := range runConfigKeys {
		if c.runs > 0 && !c.differ[i] && c.values[i] != "" {
			out = append(out, ConfigValue{Key: k, Value: c.values[i]})
		}
	}
	return out
}

// resolveCommit finds the one recorded commit ref names.
func (s *sqlStore) resolveCommit(ctx context.Context, ref string) (string, bool, error) {
	prefix, dirty := strings.CutSuffix(ref, dirtySuffix)
	if len(prefix) < 4 {
		return "", false, fmt.Errorf("%w %q: give at least 4 characters of the hash", ErrUnknownCommit, ref)
	}
	// An exact hash wins even if it is also a prefix of another one.
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT DISTINCT commit_hash FROM bench_runs
		WHERE dirty = ? AND (commit_hash = ? OR substr(commit_hash, 1, ?) = ?)`),
		dirty, prefix, len(prefix), prefix)
	if err != nil {
		return "", false, fmt.Errorf("find commit %s: %w", ref, err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return "", false, fmt.Errorf("find commit %s: %w", ref, err)
		}
		if h == prefix {
			return h, dirty, nil
		}
		found = append(found, h)
	}
	if err := rows.Err(); err != nil {
		return "", false, fmt.Errorf("find commit %s: %w", ref, err)
	}
	switch len(found) {
	case 0:
		return "", false, fmt.Errorf("%w %s: no benchmark runs recorded for it", ErrUnknownCommit, ref)
	case 1:
		return found[0], dirty, nil
	}
	sort.Strings(found)
	return "", false, fmt.Errorf("commit %s is ambiguous: it starts %d recorded commits (%s, ...)", ref, len(found), strings.Join(found[:2], ", "))
}

// ProfileRuns implements Store. Only Since and Limit apply.
func (s *sqlStore) ProfileRuns(ctx context.Context, f Filter) ([]ProfileRun, error) {
	query := `SELECT id, dir, target, start_time, end_time, commit_hash, dirty, version,
		requests, failures, rps, p50_ms, p99_ms, profiles, load_failed FROM profile_runs WHERE start_time >= ?
		ORDER BY start_time DESC, id`
	args := []any{nanos(f.Since)}
	if f.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("list profiling runs: %w", err)
	}
	defer rows.Close()
	var out []ProfileRun
	for rows.Next() {
		var p ProfileRun
		var start, end int64
		if err := rows.Scan(&p.ID, &p.Dir, &p.Target, &start, &end, &p.Commit, &p.Dirty, &p.Version,
			&p.Requests, &p.Failures, &p.RPS, &p.P50Ms, &p.P99Ms, &p.ProfileOK, &p.LoadFailed); err != nil {
			return nil, fmt.Errorf("list profiling runs: %w", err)
		}
		p.Start, p.End = fromNanos(start), fromNanos(end)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list profiling runs: %w", err)
	}
	return out, nil
}

// keyLess orders metrics by package, name and unit, bytewise.
func keyLess(a, b SeriesKey) bool {
	if a.Package != b.Package {
		return a.Package < b.Package
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Unit < b.Unit
}

func sortKeys(keys []SeriesKey) {
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
}
