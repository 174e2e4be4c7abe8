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

// A runQuery is the FROM and WHERE of a query over benchmark runs, as r
// with their machine m. It is where Filter's selection of runs becomes SQL,
// the one place.
type runQuery struct {
	from     string
	fromArgs []any // arguments of placeholders in from
	conds    []string
	args     []any // arguments of placeholders in conds
}

// benchRuns returns the query of the runs f selects by branch, machine and
// time.
func benchRuns(f Filter) runQuery {
	return filterRuns(`bench_runs r JOIN machines m ON m.id = r.machine_id`, f)
}

// seriesRuns is benchRuns narrowed to the runs with samples of one series,
// joined as s.
func seriesRuns(f Filter, seriesID int64) runQuery {
	q := filterRuns(`samples s JOIN bench_runs r ON r.id = s.run_id JOIN machines m ON m.id = r.machine_id`, f)
	return q.where("s.series_id = ?", seriesID)
}

// filterRuns returns the query of the runs from joins that f selects.
func filterRuns(from string, f Filter) runQuery {
	q := runQuery{from: from}
	if f.Branch != "" {
		q = q.where("r.branch = ?", f.Branch)
	}
	if f.Machine != "" {
		q = q.where("m.hostname = ?", f.Machine)
	}
	if !f.Since.IsZero() {
		q = q.where("r.sort_time >= ?", nanos(f.Since))
	}
	return q
}

// where adds a condition.
func (q runQuery) where(cond string, args ...any) runQuery {
	q.conds = append(slices.Clip(q.conds), cond)
	q.args = append(slices.Clip(q.args), args...)
	return q
}

// sql returns the query's FROM and WHERE clauses and their arguments.
func (q runQuery) sql() (string, []any) {
	s := ` FROM ` + q.from
	if len(q.conds) > 0 {
		s += ` WHERE ` + strings.Join(q.conds, " AND ")
	}
	return s, append(slices.Clip(q.fromArgs), q.args...)
}

// latest narrows q to the runs of the latest limit commits among those it
// selects, in order o; all of them when limit is not positive. A commit's
// place is that of its first run (the lowest id), as commitAgg orders them.
func (q runQuery) latest(o Order, limit int) runQuery {
	if limit <= 0 {
		return q
	}
	order := `c.first_id DESC`
	if o == ByCommitTime {
		order = `fr.sort_time DESC, c.first_id DESC`
	}
	from, args := q.sql()
	q.from += ` JOIN (SELECT c.commit_hash, c.dirty FROM
		(SELECT r.commit_hash, r.dirty, MIN(r.id) AS first_id` + from + ` GROUP BY r.commit_hash, r.dirty) c
		JOIN bench_runs fr ON fr.id = c.first_id ORDER BY ` + order + ` LIMIT ?) lc
		ON lc.commit_hash = r.commit_hash AND lc.dirty = r.dirty`
	q.fromArgs = append(append(slices.Clip(q.fromArgs), args...), limit)
	return q
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
	subject, author             string
	dirty, interrupted          bool
	commitTime, runTime, sortAt int64
}

const runCols = `r.id, r.commit_hash, r.branch, m.hostname, r.dirty, r.interrupted, r.commit_time, r.run_time, r.sort_time, r.subject, r.author`

func (r *runRow) dest() []any {
	return []any{&r.id, &r.hash, &r.branch, &r.host, &r.dirty, &r.interrupted, &r.commitTime, &r.runTime, &r.sortAt, &r.subject, &r.author}
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

// newCommitAgg returns an empty aggregate sized for about n commits.
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
	if c.Subject == "" && c.Author == "" {
		// A run uploaded without them says nothing against
		// another's.
		c.Subject, c.Author = r.subject, r.author
	}
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

// order returns the commits' indexes in the order asked for.
func (a *commitAgg) order(o Order) []int {
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
	return idx
}

// Commits lists the commits that have benchmark runs matching f, in f.Order,
// the latest f.Limit of them when it is positive. SQL selects the runs of
// those commits; they are merged into commits here.
func (h *BenchHistory) Commits(ctx context.Context, f Filter) ([]Commit, error) {
	from, args := benchRuns(f).latest(f.Order, f.Limit).sql()
	agg := newCommitAgg(0)
	err := h.b.each(ctx, `SELECT `+runCols+from+` ORDER BY r.id`, args, func(rows *sql.Rows) error {
		var r runRow
		if err := rows.Scan(r.dest()...); err != nil {
			return err
		}
		agg.add(r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list commits: %w", err)
	}
	var out []Commit
	for _, i := range agg.order(f.Order) {
		out = append(out, agg.commits[i])
	}
	return out, nil
}

// Benchmarks lists the benchmarks and their units matching f. Since, Order
// and Limit do not narrow it.
func (h *BenchHistory) Benchmarks(ctx context.Context, f Filter) ([]Benchmark, error) {
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
	rows, err := h.b.db.QueryContext(ctx, h.b.q(query), args...)
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

// Series returns one benchmark's samples in one unit, one point per commit,
// merged over the commit's runs that match f, in f.Order: the latest
// f.Limit commits when it is positive. Package, Name and Unit of f are
// ignored: key names the metric.
func (h *BenchHistory) Series(ctx context.Context, key SeriesKey, f Filter) ([]SeriesPoint, error) {
	var seriesID int64
	err := h.b.db.QueryRowContext(ctx, h.b.q(`SELECT id FROM series WHERE package = ? AND name = ? AND unit = ?`),
		key.Package, key.Name, key.Unit).Scan(&seriesID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("series %s %s: %w", key.Name, key.Unit, err)
	}
	from, args := seriesRuns(f, seriesID).latest(f.Order, f.Limit).sql()
	agg := newCommitAgg(0)
	agg.samples = []pointSamples{}
	// vals is only decoded, never kept, so the driver's buffer is read
	// in place instead of copied for every row.
	var vals sql.RawBytes
	var r runRow
	dest := append(r.dest(), &vals)
	err = h.b.each(ctx, `SELECT `+runCols+`, s.vals`+from+` ORDER BY s.run_id`, args, func(rows *sql.Rows) error {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		i := agg.add(r)
		p := &agg.samples[i]
		p.runIDs = append(p.runIDs, r.id)
		var err error
		if p.values, err = decodeValues(p.values, vals); err != nil {
			return fmt.Errorf("run %d: %w", r.id, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("series %s %s: %w", key.Name, key.Unit, err)
	}
	order := agg.order(f.Order)
	out := make([]SeriesPoint, 0, len(order))
	for _, i := range order {
		out = append(out, SeriesPoint{Commit: agg.commits[i], RunIDs: agg.samples[i].runIDs, Values: agg.samples[i].values})
	}
	return out, nil
}

// CommitSamples returns every sample recorded for one commit, for comparing
// two commits. ref is a commit hash or a unique prefix of at least 4
// characters, with "+dirty" appended for runs made on a modified work tree
// (as Commit.Ref prints it).
func (h *BenchHistory) CommitSamples(ctx context.Context, ref string, f Filter) (*CommitSamples, error) {
	hash, dirty, err := h.resolveCommit(ctx, ref)
	if err != nil {
		return nil, err
	}
	match, err := newNameMatcher(f)
	if err != nil {
		return nil, err
	}
	q := benchRuns(f).where("r.commit_hash = ? AND r.dirty = ?", hash, dirty)
	q.from += ` JOIN samples s ON s.run_id = r.id JOIN series se ON se.id = s.series_id`
	if f.Unit != "" {
		q = q.where("se.unit = ?", f.Unit)
	}
	from, args := q.sql()
	agg := newCommitAgg(1)
	lastRun := int64(-1)
	index := make(map[SeriesKey]int)
	out := &CommitSamples{}
	var vals []byte
	var conf runConfig
	err = h.b.each(ctx, `SELECT `+runCols+`, m.goos, m.goarch, m.cpu, r.go_version, se.package, se.name, se.unit, s.vals`+from+` ORDER BY r.id`, args, func(rows *sql.Rows) error {
		var r runRow
		var k SeriesKey
		var rc [len(runConfigKeys)]string
		if err := rows.Scan(append(r.dest(), &rc[0], &rc[1], &rc[2], &rc[3], &k.Package, &k.Name, &k.Unit, &vals)...); err != nil {
			return err
		}
		if r.id != lastRun {
			agg.add(r)
			conf.add(rc)
			lastRun = r.id
		}
		if !match.match(k) {
			return nil
		}
		i, ok := index[k]
		if !ok {
			i = len(out.Samples)
			index[k] = i
			out.Samples = append(out.Samples, SeriesSamples{SeriesKey: k})
		}
		var err error
		if out.Samples[i].Values, err = decodeValues(out.Samples[i].Values, vals); err != nil {
			return fmt.Errorf("run %d: %w", r.id, err)
		}
		return nil
	})
	if err != nil {
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
func (h *BenchHistory) resolveCommit(ctx context.Context, ref string) (string, bool, error) {
	prefix, dirty := strings.CutSuffix(ref, dirtySuffix)
	if len(prefix) < 4 {
		return "", false, fmt.Errorf("%w %q: give at least 4 characters of the hash", ErrUnknownCommit, ref)
	}
	// An exact hash wins even if it is also a prefix of another one.
	rows, err := h.b.db.QueryContext(ctx, h.b.q(`SELECT DISTINCT commit_hash FROM bench_runs
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
