package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
)

// ProfileSeries keeps the profiles of live targets over time (see the
// package doc): Append stores a scrape; MergedProfile, Top,
// FunctionSeries and Diff answer a profseries.Query; ProfileTargets lists
// what is stored; ApplyRetention compacts and drops old data.
type ProfileSeries struct {
	b *sqlDB
	// codec is made on first use: most commands that open a store never
	// touch profile series.
	codecOnce sync.Once
	codecVal  *profseries.Codec
	// Retention is applied by ApplyRetention; DefaultRetention unless
	// changed before use.
	Retention Retention
	// now is the reader's clock, for what it knows until a time (see
	// covered); time.Now.
	now func() time.Time

	mu    sync.Mutex
	cache symbolCache
	// stacks are the stacks reads resolved, while the collection epoch
	// is stacksEpoch: a collection may free ids that SQLite then gives
	// to other stacks.
	stacks      *profseries.StackCache
	stacksEpoch int64

	// queue holds the Appends waiting for the writer (see Append).
	queue appendQueue

	seriesMu    sync.Mutex
	seriesList  *seriesList  // see allSeries
	processList *processList // see knownProcesses

	merges  merges                              // see mergeQuery
	buckets *keptLRU[string, profseries.Window] // see profileseries_buckets.go
	packs   *keptLRU[packKey, [][]byte]         // see packReader
	marks   *keptLRU[string, *profseries.Chain] // see profileseries_marks.go
	covers  *keptLRU[string, struct{}]          // see covered
	rows    *keptLRU[string, []gaugeRow]        // see keptRows
	levels  *keptLRU[string, []levelRow]        // see bucketLevels
	// staleMarks counts the reads made again because a chain resumed
	// from a mark met a block it lacks (see errStaleMark).
	staleMarks atomic.Int64

	// chainsFrom is where the store's scrapes are coded in chains of
	// chainSpan; before it, of an hour (see chainStart).
	chainsFrom int64
}

// symbolCache remembers ids this process has seen, so a scrape that
// repeats the last one's stacks costs no query for them. It is dropped
// whenever a collection (ApplyRetention, here or in another process) may
// have removed items: the gc_epoch in prof_meta says so.
type symbolCache struct {
	epoch     int64
	ids       [6]map[uint64]uint64 // per kind: hash to id
	lastSeen  map[uint64]int64     // stack id to the last_seen this process wrote
	series    map[string]int64
	processes map[profseries.Process]int64
	shapes    map[int64]profseries.Shape
	days      map[int64]bool // PostgreSQL partitions known to exist
	// last is, per series of a Chained type, the last block this
	// process stored, which the next is coded against; pending what the
	// transaction under way stored, moved to last when it commits.
	last, pending map[int64]lastBlock
}

// lastBlock is a stored block a series' next block may be coded against.
type lastBlock struct {
	start, process, shape int64
	samples               []profseries.Sample
}

func (c *symbolCache) reset(epoch int64) {
	c.epoch = epoch
	for k := range c.ids {
		c.ids[k] = map[uint64]uint64{}
	}
	c.lastSeen = map[uint64]int64{}
	c.series = map[string]int64{}
	c.processes = map[profseries.Process]int64{}
	c.last, c.pending = map[int64]lastBlock{}, map[int64]lastBlock{}
	if c.shapes == nil {
		c.shapes = map[int64]profseries.Shape{}
	}
	if c.days == nil {
		c.days = map[int64]bool{}
	}
}

func newProfileSeries(b *sqlDB) *ProfileSeries {
	ps := &ProfileSeries{b: b, Retention: DefaultRetention, now: time.Now,
		buckets: newKeptLRU[string, profseries.Window](bucketsKept), packs: newKeptLRU[packKey, [][]byte](packsKept),
		marks: newKeptLRU[string, *profseries.Chain](marksKept), covers: newKeptLRU[string, struct{}](coversKept),
		rows: newKeptLRU[string, []gaugeRow](keptRowsLimit), levels: newKeptLRU[string, []levelRow](levelRowsKept)}
	ps.cache.reset(-1)
	return ps
}

func (ps *ProfileSeries) codec() *profseries.Codec {
	ps.codecOnce.Do(func() { ps.codecVal = profseries.NewCodec() })
	return ps.codecVal
}

// symbolTables names the table of each kind.
var symbolTables = [...]string{
	profseries.KindFunction: "prof_functions",
	profseries.KindMapping:  "prof_mappings",
	profseries.KindLocation: "prof_locations",
	profseries.KindStack:    "prof_stacks",
	profseries.KindShape:    "prof_shapes",
	profseries.KindCaller:   "prof_callers",
}

// lastSeenSlack is how stale a stack's last_seen may be: a scrape updates
// it only when it is older than this, and collection keeps stacks seen
// this long before the oldest block (see collectSymbols).
const lastSeenSlack = time.Hour

func checkScrape(s *profseries.Scrape) error {
	switch {
	case s == nil || s.Profile == nil:
		return errors.New("no profile")
	case len(s.Target) == 0:
		return errors.New("target has no labels")
	case s.Start.IsZero() || s.End.Before(s.Start):
		return fmt.Errorf("bad window %v to %v", s.Start, s.End)
	}
	for _, t := range profseries.Types {
		if s.Type == t {
			return nil
		}
	}
	return fmt.Errorf("unknown profile type %q", s.Type)
}

// lock takes, on PostgreSQL, the lock that keeps a collection of unused
// symbols from running while a scrape refers to them: shared for writers,
// exclusive for collection. SQLite's transactions already run one at a
// time.
func (ps *ProfileSeries) lock(ctx context.Context, tx *sql.Tx, exclusive bool) error {
	if ps.b.d.name != "postgres" {
		return nil
	}
	q := `SELECT pg_advisory_xact_lock_shared(7368013)`
	if exclusive {
		q = `SELECT pg_advisory_xact_lock(7368013)`
	}
	_, err := tx.ExecContext(ctx, q)
	return err
}

func (ps *ProfileSeries) checkEpoch(ctx context.Context, tx *sql.Tx) error {
	var epoch int64
	if err := tx.QueryRowContext(ctx, `SELECT value FROM prof_meta WHERE name = 'gc_epoch'`).Scan(&epoch); err != nil {
		return fmt.Errorf("read collection epoch: %w", err)
	}
	if epoch != ps.cache.epoch {
		ps.cache.reset(epoch)
	}
	return nil
}

// labelsKey is the canonical text of a label set, as stored.
func labelsKey(ls profseries.Labels) string {
	pairs := make([][2]string, len(ls))
	for i, l := range ls {
		pairs[i] = [2]string{l.Name, l.Value}
	}
	b, _ := json.Marshal(pairs)
	return string(b)
}

func parseLabelsKey(s string) (profseries.Labels, error) {
	var pairs [][2]string
	if err := json.Unmarshal([]byte(s), &pairs); err != nil {
		return nil, fmt.Errorf("stored labels %q: %w", s, err)
	}
	ls := make(profseries.Labels, len(pairs))
	for i, p := range pairs {
		ls[i] = profseries.Label{Name: p[0], Value: p[1]}
	}
	return ls, nil
}

func (ps *ProfileSeries) seriesID(ctx context.Context, tx *sql.Tx, target profseries.Labels, typ string) (int64, error) {
	key := labelsKey(target)
	if id, ok := ps.cache.series[typ+key]; ok {
		return id, nil
	}
	if _, err := tx.ExecContext(ctx, ps.b.q(`INSERT INTO prof_series (labels, type) VALUES (?, ?) ON CONFLICT (labels, type) DO NOTHING`), key, typ); err != nil {
		return 0, fmt.Errorf("add series: %w", err)
	}
	var id int64
	if err := tx.QueryRowContext(ctx, ps.b.q(`SELECT id FROM prof_series WHERE labels = ? AND type = ?`), key, typ).Scan(&id); err != nil {
		return 0, fmt.Errorf("find series: %w", err)
	}
	ps.cache.series[typ+key] = id
	return id, nil
}

func (ps *ProfileSeries) processID(ctx context.Context, tx *sql.Tx, p profseries.Process) (int64, error) {
	if id, ok := ps.cache.processes[p]; ok {
		return id, nil
	}
	if _, err := tx.ExecContext(ctx, ps.b.q(`INSERT INTO prof_processes (build_id, generation) VALUES (?, ?) ON CONFLICT (build_id, generation) DO NOTHING`), p.BuildID, p.Generation); err != nil {
		return 0, fmt.Errorf("add process: %w", err)
	}
	var id int64
	if err := tx.QueryRowContext(ctx, ps.b.q(`SELECT id FROM prof_processes WHERE build_id = ? AND generation = ?`), p.BuildID, p.Generation).Scan(&id); err != nil {
		return 0, fmt.Errorf("find process: %w", err)
	}
	ps.cache.processes[p] = id
	return id, nil
}

// txSymbols is the symbol table of one Append's transaction.
type txSymbols struct {
	ctx    context.Context
	tx     *sql.Tx
	ps     *ProfileSeries
	seen   int64    // the scrape's start: stacks' last_seen
	stale  []uint64 // stacks whose last_seen is to be moved to seen
	staled map[uint64]bool
}

func (t *txSymbols) Intern(k profseries.Kind, hash uint64, content []byte) (uint64, error) {
	c := &t.ps.cache
	id, ok := c.ids[k][hash]
	if !ok {
		var err error
		if id, err = t.lookupOrInsert(k, hash, content); err != nil {
			return 0, err
		}
		c.ids[k][hash] = id
		if k == profseries.KindStack {
			c.lastSeen[id] = t.seen
		}
	}
	if k == profseries.KindStack && c.lastSeen[id] < t.seen-int64(lastSeenSlack) && !t.staled[id] {
		if t.staled == nil {
			t.staled = map[uint64]bool{}
		}
		t.staled[id] = true
		t.stale = append(t.stale, id)
	}
	return id, nil
}

func (t *txSymbols) lookupOrInsert(k profseries.Kind, hash uint64, content []byte) (uint64, error) {
	table := symbolTables[k]
	find := func() (uint64, bool, error) {
		var id int64
		var data []byte
		err := t.tx.QueryRowContext(t.ctx, t.ps.b.q(`SELECT id, data FROM `+table+` WHERE hash = ?`), int64(hash)).Scan(&id, &data)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, err
		}
		if !bytes.Equal(data, content) {
			return 0, false, fmt.Errorf("two %ss with hash %x", k, hash)
		}
		return uint64(id), true, nil
	}
	id, ok, err := find()
	if err != nil || ok {
		return id, err
	}
	cols, args := `hash, data`, []any{int64(hash), content}
	if k == profseries.KindStack {
		cols, args = cols+`, last_seen`, append(args, t.seen)
	}
	if _, err := t.tx.ExecContext(t.ctx, t.ps.b.q(`INSERT INTO `+table+` (`+cols+`) VALUES (?, ?`+strings.Repeat(", ?", len(args)-2)+`) ON CONFLICT (hash) DO NOTHING`), args...); err != nil {
		return 0, fmt.Errorf("add %s: %w", k, err)
	}
	if id, ok, err = find(); err == nil && !ok {
		err = fmt.Errorf("%s %x vanished", k, hash)
	}
	return id, err
}

// touch moves the last_seen of the stacks this scrape used that were
// stale.
func (t *txSymbols) touch() error {
	for ids := range chunks(t.stale, 500) {
		q, args := inList(`UPDATE prof_stacks SET last_seen = ? WHERE last_seen < ? AND id IN `, ids, t.seen, t.seen)
		if _, err := t.tx.ExecContext(t.ctx, t.ps.b.q(q), args...); err != nil {
			return fmt.Errorf("mark stacks seen: %w", err)
		}
		for _, id := range ids {
			t.ps.cache.lastSeen[id] = t.seen
		}
	}
	return nil
}

// chunks yields ids n at a time.
func chunks(ids []uint64, n int) func(func([]uint64) bool) {
	return func(yield func([]uint64) bool) {
		for len(ids) > 0 {
			m := min(n, len(ids))
			if !yield(ids[:m]) {
				return
			}
			ids = ids[m:]
		}
	}
}

// inList appends "(?, ?, ...)" for ids to q, and ids to args.
func inList(q string, ids []uint64, args ...any) (string, []any) {
	var b strings.Builder
	b.WriteString(q)
	b.WriteByte('(')
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('?')
		args = append(args, int64(id))
	}
	b.WriteByte(')')
	return b.String(), args
}

// readSymbols is the SymbolSource of reads.
type readSymbols struct {
	ctx context.Context
	ps  *ProfileSeries
}

func (r readSymbols) Lookup(k profseries.Kind, ids []uint64) (map[uint64][]byte, error) {
	out := make(map[uint64][]byte, len(ids))
	for part := range chunks(ids, 500) {
		q, args := inList(`SELECT id, data FROM `+symbolTables[k]+` WHERE id IN `, part)
		err := r.ps.b.each(r.ctx, q, args, func(rows *sql.Rows) error {
			var id int64
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				return err
			}
			out[uint64(id)] = data
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// stackCacheLimit bounds the stacks reads keep resolved, in locations
// (8 bytes each).
const stackCacheLimit = 1 << 21

// Stacks implements profseries.CachingSource: the stacks resolved since
// the last collection of symbols. Without the epoch, nothing is cached.
func (r readSymbols) Stacks() *profseries.StackCache {
	var epoch int64
	if err := r.ps.b.reader(r.ctx).QueryRowContext(r.ctx, `SELECT value FROM prof_meta WHERE name = 'gc_epoch'`).Scan(&epoch); err != nil {
		return nil
	}
	r.ps.mu.Lock()
	defer r.ps.mu.Unlock()
	if r.ps.stacks == nil || r.ps.stacksEpoch != epoch {
		r.ps.stacks, r.ps.stacksEpoch = profseries.NewStackCache(stackCacheLimit), epoch
	}
	return r.ps.stacks
}

// A ProfileTarget is one stored series: a target's profile type, and the
// time its stored scrapes span.
type ProfileTarget struct {
	Labels profseries.Labels `json:"labels"`
	Type   string            `json:"type"`
	// First is the start of the first stored scrape, Last the end of
	// the last.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	// Scrapes counts stored blocks: scrapes, or windows of merged scrapes
	// once compacted.
	Scrapes int64 `json:"scrapes"`
	// Bytes is the size of the stored blocks (symbols not included).
	Bytes int64 `json:"bytes"`
}

// ProfileTargets lists the stored series sel chooses ("" type: every
// type), by labels then type.
func (ps *ProfileSeries) ProfileTargets(ctx context.Context, typ string, sel profseries.Selector) ([]ProfileTarget, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	var out []ProfileTarget
	// The summaries Append keeps (see record): one row per series, not
	// an aggregate of its blocks. Rollups are counted in bytes (they are
	// stored) but not as scrapes.
	q := `SELECT labels, type, first_time, last_time, scrapes, bytes FROM prof_series WHERE blocks > 0`
	var args []any
	if typ != "" {
		q += ` AND type = ?`
		args = append(args, typ)
	}
	q += ` ORDER BY labels, type`
	err := ps.b.each(ctx, q, args, func(rows *sql.Rows) error {
		var key string
		var t ProfileTarget
		var first, last int64
		if err := rows.Scan(&key, &t.Type, &first, &last, &t.Scrapes, &t.Bytes); err != nil {
			return err
		}
		ls, err := parseLabelsKey(key)
		if err != nil {
			return err
		}
		if sel.Matches(ls) {
			t.Labels, t.First, t.Last = ls, fromNanos(first), fromNanos(last)
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list profile series: %w", err)
	}
	return out, nil
}

// lengthFn writes LENGTH for the engine: PostgreSQL's is octet_length
// for bytea.
func (ps *ProfileSeries) lengthFn(q string) string {
	if ps.b.d.name == "postgres" {
		return strings.ReplaceAll(q, "LENGTH(", "octet_length(")
	}
	return q
}

// Windows reads the decoded blocks of q: every stored block of a series
// q's selector chooses whose start is in [q.From, q.To). Blocks compacted
// into windows are read as their windows, which start at a multiple of
// their resolution. Each window names its target's process.
func (ps *ProfileSeries) Windows(ctx context.Context, q profseries.Query) ([]profseries.Window, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	var windows []profseries.Window
	err := ps.eachBlock(ctx, q, "data", true, func(dec *blockDecoder, b storedBlock) error {
		samples, err := dec.samples(b.series, b.resolution, nanos(b.w.Start), b.data)
		if err != nil {
			return err
		}
		b.w.Samples = samples
		windows = append(windows, b.w)
		return nil
	})
	return windows, err
}

// A storedBlock is one block as eachBlock reads it: its series,
// resolution and one stored column, and its window without samples.
type storedBlock struct {
	series, resolution int64
	data               []byte
	w                  profseries.Window
}

// eachBlock calls fn with every stored block of a series q's selector
// chooses whose start is in [q.From, q.To), in order of time, the
// block's column (data, or levels) read, and the decoder to decode its
// data with: where column is data, the blocks before q.From that later
// ones are coded against are read into it first. With requests, the
// windows of scrapes carry their request counts.
func (ps *ProfileSeries) eachBlock(ctx context.Context, q profseries.Query, column string, requests bool, fn func(*blockDecoder, storedBlock) error) error {
	series, processes, ids, err := ps.seriesOf(ctx, q)
	if err != nil {
		return err
	}
	dec := ps.decoder(ctx, q.Type)
	from := nanos(q.From)
	readFrom := from
	if column == "data" {
		readFrom = dec.readFrom(from)
	}
	for part := range chunks(ids, 500) {
		var counts map[scrapeKey]*profseries.Requests
		if requests {
			if counts, err = ps.requests(ctx, part, q); err != nil {
				return err
			}
		}
		sq, args := inList(`SELECT series_id, resolution, start_time, end_time, duration, process_id, shape_id, `+column+` FROM prof_blocks
			WHERE `+atResolutions+` AND start_time >= ? AND start_time < ? AND series_id IN `, part, readFrom, nanos(q.To))
		sq += ` ORDER BY start_time`
		err = ps.b.each(ctx, sq, args, func(rows *sql.Rows) error {
			var b storedBlock
			var start, end, duration, processID, shapeID int64
			if err := rows.Scan(&b.series, &b.resolution, &start, &end, &duration, &processID, &shapeID, &b.data); err != nil {
				return err
			}
			if start < from {
				return dec.skip(b.series, b.resolution, start, b.data)
			}
			shape, err := ps.shape(ctx, shapeID)
			if err != nil {
				return err
			}
			b.w = profseries.Window{Start: fromNanos(start), End: fromNanos(end), Duration: time.Duration(duration), Shape: shape,
				Processes: []profseries.TargetProcess{{Target: series[b.series], Process: processes[processID]}}}
			if b.resolution == 0 {
				b.w.Requests = counts[scrapeKey{b.series, start, processID}]
			}
			return fn(dec, b)
		})
		if err != nil {
			return fmt.Errorf("read profile blocks: %w", err)
		}
	}
	return nil
}

// A scrapeKey names one scrape of a series as stored at full resolution.
type scrapeKey struct{ series, start, process int64 }

// requests reads the request counts stored with the scrapes of series in
// q's range.
func (ps *ProfileSeries) requests(ctx context.Context, series []uint64, q profseries.Query) (map[scrapeKey]*profseries.Requests, error) {
	out := map[scrapeKey]*profseries.Requests{}
	sq, args := inList(`SELECT series_id, start_time, process_id, total, span, routes FROM prof_requests
		WHERE start_time >= ? AND start_time < ? AND series_id IN `, series, nanos(q.From), nanos(q.To))
	err := ps.b.each(ctx, sq, args, func(rows *sql.Rows) error {
		var k scrapeKey
		var r profseries.Requests
		var routes string
		var span int64
		if err := rows.Scan(&k.series, &k.start, &k.process, &r.Total, &span, &routes); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(routes), &r.Routes); err != nil {
			return fmt.Errorf("stored request counts: %w", err)
		}
		r.Span = time.Duration(span)
		out[k] = &r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read request counts: %w", err)
	}
	return out, nil
}

// seriesOf checks q and returns the series it chooses (labels by id),
// every process by id (not to be changed: see knownProcesses), and the
// series' ids in order.
func (ps *ProfileSeries) seriesOf(ctx context.Context, q profseries.Query) (map[int64]profseries.Labels, map[int64]profseries.Process, []uint64, error) {
	if err := q.Check(); err != nil {
		return nil, nil, nil, err
	}
	series, err := ps.matchingSeries(ctx, q)
	if err != nil {
		return nil, nil, nil, err
	}
	processes, err := ps.knownProcesses(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	return series, processes, sortedIDs(series), nil
}

// sortedIDs returns the ids of series, in order.
func sortedIDs(series map[int64]profseries.Labels) []uint64 {
	ids := make([]uint64, 0, len(series))
	for id := range series {
		ids = append(ids, uint64(id))
	}
	slices.Sort(ids)
	return ids
}

// matchingSeries returns the series of q's type that q's selector
// chooses, by id.
func (ps *ProfileSeries) matchingSeries(ctx context.Context, q profseries.Query) (map[int64]profseries.Labels, error) {
	all, err := ps.allSeries(ctx)
	if err != nil {
		return nil, fmt.Errorf("read profile series: %w", err)
	}
	out := map[int64]profseries.Labels{}
	for _, s := range all[q.Type] {
		if q.Selector.Matches(s.labels) {
			out[s.id] = s.labels
		}
	}
	return out, nil
}

// A listState says whether a list of a table's rows kept in memory
// (series, processes) still holds every row: its rows never change, a new
// one has a higher id, and removing any bumps the collection epoch (see
// collectSymbols). Ids are given in order but, with writers in several
// processes (scrapers sharing a PostgreSQL), not committed in order: a row
// can appear below the newest id seen, which the count of rows shows.
type listState struct{ epoch, newest, count int64 }

// listState reads table's state (one row read).
func (ps *ProfileSeries) listState(ctx context.Context, table string) (listState, error) {
	var st listState
	var newest sql.NullInt64
	if err := ps.b.reader(ctx).QueryRowContext(ctx, `SELECT (SELECT value FROM prof_meta WHERE name = 'gc_epoch'), (SELECT MAX(id) FROM `+table+`), (SELECT COUNT(*) FROM `+table+`)`).Scan(&st.epoch, &newest, &st.count); err != nil {
		return listState{}, fmt.Errorf("read the state of %s: %w", table, err)
	}
	ps.b.rowsRead.Add(1)
	st.newest = newest.Int64
	return st, nil
}

// A seriesList is every stored series, by type, and the state of
// prof_series they were read in.
type seriesList struct {
	state  listState
	byType map[string][]seriesLabels
}

type seriesLabels struct {
	id     int64
	labels profseries.Labels
}

// allSeries returns every stored series: from memory while no series was
// added or removed since it was read (one row read to know), so that a
// page asking for each of a thousand targets' series does not read and
// parse every series a thousand times.
func (ps *ProfileSeries) allSeries(ctx context.Context) (map[string][]seriesLabels, error) {
	st, err := ps.listState(ctx, "prof_series")
	if err != nil {
		return nil, err
	}
	ps.seriesMu.Lock()
	defer ps.seriesMu.Unlock()
	if l := ps.seriesList; l != nil && l.state == st {
		return l.byType, nil
	}
	// The state kept is that of the rows read: a row added since st
	// was read makes it newer than st, and the next call reads again.
	l := &seriesList{state: listState{epoch: st.epoch}, byType: map[string][]seriesLabels{}}
	err = ps.b.each(ctx, `SELECT id, labels, type FROM prof_series`, nil, func(rows *sql.Rows) error {
		var s seriesLabels
		var key, typ string
		if err := rows.Scan(&s.id, &key, &typ); err != nil {
			return err
		}
		ls, err := parseLabelsKey(key)
		if err != nil {
			return err
		}
		s.labels = ls
		l.byType[typ] = append(l.byType[typ], s)
		l.state.newest, l.state.count = max(l.state.newest, s.id), l.state.count+1
		return nil
	})
	if err != nil {
		return nil, err
	}
	ps.seriesList = l
	return l.byType, nil
}

// A processList is every stored process, by id, and the state of
// prof_processes they were read in.
type processList struct {
	state listState
	byID  map[int64]profseries.Process
}

// knownProcesses returns every stored process by id, as allSeries returns
// the series: from memory while none was added or removed since they were
// read, so that a page reading the blocks of each of a thousand targets
// does not read every process a thousand times. Callers share the map and
// must not change it.
func (ps *ProfileSeries) knownProcesses(ctx context.Context) (map[int64]profseries.Process, error) {
	st, err := ps.listState(ctx, "prof_processes")
	if err != nil {
		return nil, err
	}
	ps.seriesMu.Lock()
	defer ps.seriesMu.Unlock()
	if l := ps.processList; l != nil && l.state == st {
		return l.byID, nil
	}
	byID, err := ps.processes(ctx)
	if err != nil {
		return nil, err
	}
	l := &processList{state: listState{epoch: st.epoch, count: int64(len(byID))}, byID: byID}
	for id := range byID {
		l.state.newest = max(l.state.newest, id)
	}
	ps.processList = l
	return byID, nil
}

func (ps *ProfileSeries) shape(ctx context.Context, id int64) (profseries.Shape, error) {
	ps.mu.Lock()
	s, ok := ps.cache.shapes[id]
	ps.mu.Unlock()
	if ok {
		return s, nil
	}
	contents, err := readSymbols{ctx, ps}.Lookup(profseries.KindShape, []uint64{uint64(id)})
	if err != nil {
		return s, err
	}
	c, ok := contents[uint64(id)]
	if !ok {
		return s, fmt.Errorf("shape %d is missing", id)
	}
	if s, err = profseries.DecodeShape(c); err != nil {
		return s, err
	}
	ps.mu.Lock()
	ps.cache.shapes[id] = s
	ps.mu.Unlock()
	return s, nil
}

// ErrNoProfiles is returned by the queries when nothing is stored for
// the series and range asked.
var ErrNoProfiles = errors.New("no profiles stored")

func (ps *ProfileSeries) windows(ctx context.Context, q profseries.Query) ([]profseries.Window, error) {
	ws, err := ps.Windows(ctx, q)
	if err == nil && len(ws) == 0 {
		err = fmt.Errorf("%w for %s %s from %s to %s", ErrNoProfiles, q.Type, q.Selector, q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
	}
	return ws, err
}

// A Merged is the merged profile of a query, and where its samples came
// from.
type Merged struct {
	Profile *profile.Profile
	// Processes lists each target's processes the range holds; Restarted
	// the targets of them that have more than one (a restart or a deploy
	// in the range), whose samples are merged all the same. The profile
	// has a comment for each.
	Processes []profseries.TargetProcess
	Restarted [][]profseries.TargetProcess
}

// Merge merges every scrape q chooses into one pprof profile, and says
// which processes it came from.
func (ps *ProfileSeries) Merge(ctx context.Context, q profseries.Query) (*Merged, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	w, err := ps.mergeQuery(ctx, q)
	if err != nil {
		return nil, err
	}
	p, err := profseries.BuildProfile(w, readSymbols{ctx, ps})
	if err != nil {
		return nil, err
	}
	return &Merged{Profile: p, Processes: w.Processes, Restarted: profseries.Restarted(w.Processes)}, nil
}

// MergedProfile merges every scrape q chooses into one pprof profile (see
// Merge).
func (ps *ProfileSeries) MergedProfile(ctx context.Context, q profseries.Query) (*profile.Profile, error) {
	m, err := ps.Merge(ctx, q)
	if err != nil {
		return nil, err
	}
	return m.Profile, nil
}

// Top ranks the functions of the merged profile of q by q.SampleType.
func (ps *ProfileSeries) Top(ctx context.Context, q profseries.Query, order profiles.Order, n int) (*profiles.FuncTable, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	w, err := ps.mergeQuery(ctx, q)
	if err != nil {
		return nil, err
	}
	return profseries.Top(w, readSymbols{ctx, ps}, q.SampleType, order, n)
}

// FunctionSeries is one function's share of q.SampleType per step. At
// steps of whole ten minutes over scrapes whose records are kept, each
// step is merged as read, rollups standing in for what they cover (see
// mergeSteps), and its scrapes are counted from the records; otherwise
// every scrape is decoded.
func (ps *ProfileSeries) FunctionSeries(ctx context.Context, q profseries.Query, function string, step time.Duration) ([]profseries.FunctionPoint, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	if step <= 0 || int64(step)%resolutionTenMinutes != 0 {
		return ps.functionSeriesOfScrapes(ctx, q, function, step)
	}
	series, ids, recordedFrom, err := ps.recordedSeries(ctx, q)
	if err != nil {
		return nil, err
	}
	if recordedFrom > nanos(q.From) {
		return ps.functionSeriesOfScrapes(ctx, q, function, step)
	}
	ws, err := ps.mergeSteps(ctx, q, series, ids, int64(step))
	if err != nil {
		return nil, err
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("%w for %s %s from %s to %s", ErrNoProfiles, q.Type, q.Selector, q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
	}
	pts, err := profseries.FunctionSeries(ws, readSymbols{ctx, ps}, function, q.SampleType, step)
	if err != nil {
		return nil, err
	}
	rows, err := ps.recorded(ctx, ids, nanos(q.From), nanos(q.To), gaugeWidth(step), rowGroup{step: int64(step)})
	if err != nil {
		return nil, err
	}
	scrapes := map[int64]int{}
	for _, r := range rows {
		scrapes[r.start] += int(r.scrapes)
	}
	for i := range pts {
		pts[i].Scrapes = scrapes[pts[i].Start.UnixNano()]
	}
	return pts, nil
}

// functionSeriesOfScrapes is FunctionSeries from every scrape decoded.
func (ps *ProfileSeries) functionSeriesOfScrapes(ctx context.Context, q profseries.Query, function string, step time.Duration) ([]profseries.FunctionPoint, error) {
	ws, err := ps.windows(ctx, q)
	if err != nil {
		return nil, err
	}
	return profseries.FunctionSeries(ws, readSymbols{ctx, ps}, function, q.SampleType, step)
}

// Diff compares the merged profiles of base and head in shares; the two
// queries differ only in their range, as a rule.
func (ps *ProfileSeries) Diff(ctx context.Context, base, head profseries.Query) (*profseries.RangeDiff, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	bw, err := ps.mergeQuery(ctx, base)
	if err != nil {
		return nil, err
	}
	hw, err := ps.mergeQuery(ctx, head)
	if err != nil {
		return nil, err
	}
	return profseries.Diff(bw, hw, readSymbols{ctx, ps}, head.SampleType)
}

// SeriesSpans lists the stored series of type typ ("" for every type)
// that sel chooses: their label sets, and the first start and last end
// of their blocks.
func (ps *ProfileSeries) SeriesSpans(ctx context.Context, typ string, sel profseries.Selector) ([]profseries.Span, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	ts, err := ps.ProfileTargets(ctx, typ, sel)
	if err != nil {
		return nil, err
	}
	out := make([]profseries.Span, len(ts))
	for i, t := range ts {
		out[i] = profseries.Span{Labels: t.Labels, First: t.First, Last: t.Last}
	}
	return out, nil
}

// SeriesLabels lists the label sets of the stored series of type typ that
// sel chooses.
func (ps *ProfileSeries) SeriesLabels(ctx context.Context, typ string, sel profseries.Selector) ([]profseries.Labels, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	spans, err := ps.SeriesSpans(ctx, typ, sel)
	out := make([]profseries.Labels, len(spans))
	for i, sp := range spans {
		out[i] = sp.Labels
	}
	return out, err
}
