package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Rollups: beside the blocks a series keeps at its resolutions, each whole
// hour of it is also kept merged into one block per process and shape, at
// resolution -resolutionHour, so that a merge over days reads one block an
// hour instead of hundreds; and each whole ten minutes of the last day, at
// resolution -resolutionTenMinutes, so that the edges of a range and the
// hours not rolled up yet read one block per ten minutes instead of sixty
// (see rollupLevels). A rollup starts where the first block it merged
// starts (so a merge of rollups spans what the blocks span). A rollup is
// only ever a shortcut: it records the sums of duration and raw bytes of
// the blocks it merged (which compaction keeps), and a query uses it only
// while its bucket's blocks still sum to the same, so a scrape stored late
// into a rolled-up bucket makes the query read that bucket's blocks until
// the rollup is made again. Windows, and the counts of ProfileTargets,
// never see rollups; retention and the budget delete them with their
// hour, and ten-minute rollups once their day is past.
//
// A rollup also records how many scrapes of its process its bucket had
// recorded (prof_gauges, whose buckets include an hour and ten minutes)
// when it was made (store migration 14). A query checks the rollups of the
// buckets it reads against those records, a row per series, bucket and
// process, instead of adding up every block of the buckets: a scrape
// stored late into the bucket is recorded, so the counts differ. Rollups
// made before, or of buckets whose scrapes are not recorded (stored before
// migration10), are checked against the blocks' sums.
const (
	resolutionHour = int64(time.Hour)
	// resolutionRollup is the resolution of hourly rollups.
	resolutionRollup = -resolutionHour
)

// A rollupLevel is one width of rollups.
type rollupLevel struct {
	// width is the bucket a rollup merges, from a multiple of it since
	// the epoch.
	width int64
	// delay is how long after its end a bucket is rolled up: the
	// scrapes of its last seconds are stored by then.
	delay time.Duration
	// lookback is how far back rollups are checked again, for scrapes
	// stored late: before a series' newest rollup, or before now for a
	// level that keeps its rollups a while only (keep).
	lookback time.Duration
	// keep is how long after its start a rollup is kept; 0 while its
	// blocks are.
	keep time.Duration
}

// resolution is the resolution the level's rollups are stored at.
func (l rollupLevel) resolution() int64 { return -l.width }

var (
	rollupHours = rollupLevel{width: resolutionHour, delay: 10 * time.Minute, lookback: 24 * time.Hour}
	// Ten-minute rollups are kept for a day and a little more, so that
	// the ranges of the last day (a day ago to now, the default pages)
	// find them at both edges; older ranges read up to an hour of
	// blocks at each edge. They are made only of buckets whose scrapes
	// are recorded (see covered).
	rollupTens = rollupLevel{width: resolutionTenMinutes, delay: time.Minute, lookback: 25 * time.Hour, keep: 25 * time.Hour}
	// rollupLevels are the levels, widest first.
	rollupLevels = []rollupLevel{rollupHours, rollupTens}
)

// hourKey is one bucket of one series' blocks of one process and shape
// (for a block, its start).
type hourKey struct{ series, hour, process, shape int64 }

// hourSums are the sums a rollup records of the blocks it merged.
type hourSums struct{ duration, raw int64 }

// blockSums reads, for the series ids and blocks starting in [from, to),
// the sums of each bucket of level's width of their blocks at their
// resolutions, and of the level's rollups.
func (ps *ProfileSeries) blockSums(ctx context.Context, ids []uint64, level rollupLevel, from, to int64) (blocks, rollups map[hourKey]hourSums, err error) {
	blocks, rollups = map[hourKey]hourSums{}, map[hourKey]hourSums{}
	for part := range chunks(ids, 500) {
		// Grouped by position: PostgreSQL would not take the bucket's
		// expression, parameters and all, as the one selected.
		q, args := inList(`SELECT series_id, resolution < 0, process_id, shape_id, start_time / ?, SUM(duration), SUM(raw_bytes)
			FROM prof_blocks WHERE resolution IN (?, ?, ?, ?) AND start_time >= ? AND start_time < ? AND series_id IN `, part,
			level.width, int64(0), resolutionMinute, resolutionTenMinutes, level.resolution(), from, to)
		q += ` GROUP BY 1, 2, 3, 4, 5`
		err := ps.b.each(ctx, q, args, func(rows *sql.Rows) error {
			var k hourKey
			var rollup bool
			var s hourSums
			if err := rows.Scan(&k.series, &rollup, &k.process, &k.shape, &k.hour, &s.duration, &s.raw); err != nil {
				return err
			}
			k.hour *= level.width
			if rollup {
				rollups[k] = s
			} else {
				blocks[k] = s
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("read block sums: %w", err)
		}
	}
	return blocks, rollups, nil
}

// seriesHour is one bucket of one series (an hour, or ten minutes).
type seriesHour struct{ series, hour int64 }

// rolledUp returns the buckets whose rollups merge exactly the blocks
// stored in them: every process and shape the bucket has blocks of has a
// rollup with the same sums, and no other rollup.
func rolledUp(blocks, rollups map[hourKey]hourSums) map[seriesHour]bool {
	ok := map[seriesHour]bool{}
	for k := range rollups {
		ok[seriesHour{k.series, k.hour}] = true
	}
	for k, s := range blocks {
		if r, found := rollups[k]; !found || r != s {
			ok[seriesHour{k.series, k.hour}] = false
		}
	}
	for k := range rollups {
		if _, found := blocks[k]; !found {
			ok[seriesHour{k.series, k.hour}] = false
		}
	}
	return ok
}

// coversKept bounds the bytes of the buckets known covered kept (see
// covered): a few tens of bytes a series and hour.
const coversKept = 16 << 20

// coverMargin is how long before their keep the rollups of a level that
// keeps them a while are no longer known covered (see covered): a writer
// whose clock runs ahead deletes them that much earlier.
const coverMargin = time.Hour

// rollupCountsQuery reads the process and count of scrapes of the
// rollups of a resolution starting in a range, of the series listed
// after it (see inList); "resolution < 0" lets the engines read the
// rollups' index (migration19) alone.
const rollupCountsQuery = `SELECT series_id, start_time, process_id, scrapes FROM prof_blocks
	WHERE resolution = ? AND resolution < 0 AND start_time >= ? AND start_time < ? AND series_id IN `

// covered is rolledUp's answer for the series ids over the whole buckets
// of level's width in [from, to), read from the rollups' records of their
// scrapes (see the comment at the top): a bucket is covered when each
// process with scrapes recorded in it has rollups, each recording as many
// scrapes as are recorded now, and no rollup is of a process without. A
// bucket with scrapes recorded and no rollup is in the map, not covered.
// Buckets before the series' scrapes were recorded, and buckets with a
// rollup that records no count, are checked against the blocks' sums
// (blockSums). records are the records of every bucket of the series
// from where they were all recorded (see bucketRecords).
//
// A bucket found covered is known to be while its records are as they
// were: its rollups are made again only when its scrapes change, and go
// with its blocks and records, or (a level that keeps them a while: ten
// minutes) at their keep, which the bucket is known covered until, less
// coverMargin. The store keeps those it found (covers), and reads no
// rollup of the buckets it knows.
func (ps *ProfileSeries) covered(ctx context.Context, ids []uint64, level rollupLevel, from, to int64) (covered map[seriesHour]bool, records map[seriesHour]string, err error) {
	recordedFrom, err := ps.recordedFrom(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	vouched := max(from, ceilTo(recordedFrom, level.width))
	recorded, err := ps.gaugeRows(ctx, ids, level.width, vouched, to, rowGroup{})
	if err != nil {
		return nil, nil, err
	}
	records = bucketRecords(ids, level.width, vouched, to, recorded)
	// A level's rollups kept a while (ten minutes) go at their keep: a
	// bucket is known covered up to an hour before then (writers' clocks
	// may run ahead of this one's).
	keptFrom := int64(math.MinInt64)
	if level.keep != 0 {
		keptFrom = nanos(ps.now().Add(-level.keep + coverMargin))
	}
	coverKey := func(k seriesHour) string {
		if records[k] == "" || k.hour < keptFrom {
			return ""
		}
		h := newKeyHasher()
		for _, v := range []int64{k.series, level.width, k.hour} {
			h.int(v)
		}
		h.str(records[k])
		return h.key()
	}
	// The buckets known covered, and the series with others, whose
	// rollups are read.
	knownCovered := map[seriesHour]bool{}
	var unknownIDs []uint64
	lo, hi := to, from
	for _, id := range ids {
		found := false
		for h := from; h < to; h += level.width {
			k := seriesHour{int64(id), h}
			if key := coverKey(k); key != "" {
				if _, ok := ps.covers.get(key); ok {
					knownCovered[k] = true
					continue
				}
			}
			found = true
			lo, hi = min(lo, h), max(hi, h+level.width)
		}
		if found {
			unknownIDs = append(unknownIDs, id)
		}
	}
	known := func(k seriesHour) bool { return knownCovered[k] }

	type hourProcess struct{ series, hour, process int64 }
	rolled := map[hourProcess]int64{} // each rollup's count; -1 where a shape's differs
	unknown := map[seriesHour]bool{}
	for part := range chunks(unknownIDs, 500) {
		q, args := inList(rollupCountsQuery, part, level.resolution(), lo, hi)
		err := ps.b.each(ctx, q, args, func(rows *sql.Rows) error {
			var k hourProcess
			var n sql.NullInt64
			if err := rows.Scan(&k.series, &k.hour, &k.process, &n); err != nil {
				return err
			}
			k.hour = floorTo(k.hour, level.width)
			if known(seriesHour{k.series, k.hour}) {
				return nil
			}
			if !n.Valid {
				unknown[seriesHour{k.series, k.hour}] = true
				return nil
			}
			if have, ok := rolled[k]; ok && have != n.Int64 {
				n.Int64 = -1
			}
			rolled[k] = n.Int64
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("read rollups: %w", err)
		}
	}
	covered = map[seriesHour]bool{}
	for k := range knownCovered {
		covered[k] = true
	}
	for k := range rolled {
		covered[seriesHour{k.series, k.hour}] = true
	}
	counted := map[hourProcess]bool{}
	for _, r := range recorded {
		k := hourProcess{r.series, r.start, r.process}
		if known(seriesHour{k.series, k.hour}) {
			continue // its rollups were not read
		}
		counted[k] = true
		if rolled[k] != r.scrapes {
			covered[seriesHour{k.series, k.hour}] = false
		}
	}
	for k := range rolled {
		if !counted[k] {
			covered[seriesHour{k.series, k.hour}] = false
		}
	}
	// Buckets the records cannot vouch for: the blocks' sums decide.
	var check []uint64
	lo, hi = to, from
	for _, id := range ids {
		for h := from; h < to; h += level.width {
			k := seriesHour{int64(id), h}
			if unknown[k] || (h < recordedFrom && covered[k]) {
				check = append(check, id)
				lo, hi = min(lo, h), max(hi, h+level.width)
			}
		}
	}
	if len(check) > 0 {
		blocks, rollups, err := ps.blockSums(ctx, slices.Compact(check), level, lo, hi)
		if err != nil {
			return nil, nil, err
		}
		bySums := rolledUp(blocks, rollups)
		for _, id := range slices.Compact(check) {
			for h := lo; h < hi; h += level.width {
				k := seriesHour{int64(id), h}
				if unknown[k] || (h < recordedFrom && covered[k]) {
					covered[k] = bySums[k]
				}
			}
		}
	}
	for k, ok := range covered {
		if key := coverKey(k); ok && !known(k) && key != "" && k.hour >= vouched {
			ps.covers.put(key, struct{}{}, len(key)+64)
		}
	}
	return covered, records, nil
}

// mergeQuery merges every block q chooses: the rollups of the whole
// buckets of the range that are up to date, and the blocks of the rest.
// It is what MergedProfile, Top and Diff read; the result is the merge of
// the windows Windows returns. A range merged lately is not read again
// while its series are as they were (see merges).
func (ps *ProfileSeries) mergeQuery(ctx context.Context, q profseries.Query) (profseries.Window, error) {
	if err := q.Check(); err != nil {
		return profseries.Window{}, err
	}
	series, err := ps.matchingSeries(ctx, q)
	if err != nil {
		return profseries.Window{}, err
	}
	ids := make([]uint64, 0, len(series))
	for id := range series {
		ids = append(ids, uint64(id))
	}
	slices.Sort(ids)
	state, err := ps.seriesState(ctx, ids)
	if err != nil {
		return profseries.Window{}, err
	}
	if w, ok := ps.merges.get(q, state); ok {
		return w, nil
	}
	return ps.merges.run(ctx, q, state, func() (profseries.Window, error) {
		w, err := ps.mergeBlocks(ctx, q, series, ids)
		// The snapshot of an instant (findings read each series' first
		// and last) is not kept: it would push out the ranges a page
		// reads again.
		if err == nil && q.To.Sub(q.From) >= time.Second {
			ps.merges.put(q, state, w)
		}
		return w, err
	})
}

// A coverage is which buckets of a level's width have up-to-date rollups
// (see covered), and the records of those whose scrapes were all
// recorded, rolled up or not (see bucketRecords).
type coverage struct {
	level   rollupLevel
	covered map[seriesHour]bool
	records map[seriesHour]string
	// vouched is where the records of every series read start (for
	// the minutes, whose records mark chains too: see chainMarks).
	vouched int64
}

// coverages reads which buckets of [from, to) of the series ids can be
// read as rollups of the levels whose width divides step (all for 0): the
// whole hours, then the whole ten minutes of what the hours leave (the
// range's edges, hours not rolled up).
func (ps *ProfileSeries) coverages(ctx context.Context, ids []uint64, from, to, step int64) ([]coverage, error) {
	var out []coverage
	if from <= 0 {
		return nil, nil
	}
	ctx, err := ps.withRecordsState(ctx)
	if err != nil {
		return nil, err
	}
	for _, level := range rollupLevels {
		if step > 0 && step%level.width != 0 {
			continue
		}
		c := coverage{level: level, covered: map[seriesHour]bool{}, records: map[seriesHour]string{}}
		for _, sp := range plan(ids, out, from, to) {
			if sp.res != 0 {
				continue
			}
			lo, hi := ceilTo(sp.from, level.width), floorTo(sp.to, level.width)
			if lo >= hi {
				continue
			}
			cov, recs, err := ps.covered(ctx, sp.series, level, lo, hi)
			if err != nil {
				return nil, err
			}
			maps.Copy(c.covered, cov)
			maps.Copy(c.records, recs)
		}
		out = append(out, c)
	}
	if step > 0 && step%int64(time.Minute) != 0 {
		return out, nil
	}
	// The minutes at the edges of what the levels leave, which no
	// rollup covers: their records only, for the merges of whole
	// minutes kept (see pieces), from the start of the ten minutes
	// each edge starts in, where chains start (see chainMarks).
	c := coverage{level: rollupLevel{width: int64(time.Minute)}, covered: map[seriesHour]bool{}, records: map[seriesHour]string{}}
	for _, sp := range plan(ids, out, from, to) {
		if sp.res != 0 {
			continue
		}
		// The end's edge from the ten minutes before its own: a
		// range ending now just after ten minutes whole and not rolled
		// up yet reads them as their minutes kept (see joined).
		a, b := ceilTo(sp.from, resolutionTenMinutes), floorTo(sp.to, resolutionTenMinutes)
		edges := [][2]int64{{sp.from, min(a, sp.to)}, {max(b-resolutionTenMinutes, a, sp.from), sp.to}}
		if a >= b {
			edges = [][2]int64{{sp.from, sp.to}}
		}
		for _, e := range edges {
			lo, hi := floorTo(e[0], resolutionTenMinutes), floorTo(e[1], c.level.width)
			if lo >= hi {
				continue
			}
			recs, vouched, err := ps.bucketRecordsOf(ctx, sp.series, c.level.width, lo, hi)
			if err != nil {
				return nil, err
			}
			maps.Copy(c.records, recs)
			c.vouched = max(c.vouched, vouched)
		}
	}
	return append(out, c), nil
}

// bucketRecordsOf reads the records of the buckets of width in [from, to)
// (whole ones) of the series ids, from vouched, where they were all
// recorded (see bucketRecords).
func (ps *ProfileSeries) bucketRecordsOf(ctx context.Context, ids []uint64, width, from, to int64) (records map[seriesHour]string, vouched int64, err error) {
	recordedFrom, err := ps.recordedFrom(ctx, ids)
	if err != nil {
		return nil, 0, err
	}
	vouched = ceilTo(recordedFrom, width)
	from = max(from, vouched)
	if from >= to {
		return nil, vouched, nil
	}
	rows, err := ps.gaugeRows(ctx, ids, width, from, to, rowGroup{})
	if err != nil {
		return nil, 0, err
	}
	return bucketRecords(ids, width, from, to, rows), vouched, nil
}

// mergeBlocks merges the blocks of series (ids, ascending) in q's range as
// they are read (see mergeQuery).
func (ps *ProfileSeries) mergeBlocks(ctx context.Context, q profseries.Query, series map[int64]profseries.Labels, ids []uint64) (profseries.Window, error) {
	ws, err := ps.mergeSteps(ctx, q, series, ids, 0)
	if err != nil {
		return profseries.Window{}, err
	}
	if len(ws) == 0 {
		return profseries.Window{}, fmt.Errorf("%w for %s %s from %s to %s", ErrNoProfiles, q.Type, q.Selector, q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
	}
	return ws[0], nil
}

// mergeSteps merges the blocks of series (ids, ascending) in q's range as
// they are read, in steps of step since the epoch (0: one step, the
// range), in order of time; a step with no block is left out. The series
// are read in two halves at once, each merged as read, then the halves
// merged. Rollups stand in for the buckets they cover where their width
// divides step.
func (ps *ProfileSeries) mergeSteps(ctx context.Context, q profseries.Query, series map[int64]profseries.Labels, ids []uint64, step int64) ([]profseries.Window, error) {
	processes, err := ps.knownProcesses(ctx)
	if err != nil {
		return nil, err
	}
	// The epoch before the blocks (see seriesState), for the merges of
	// buckets kept.
	epoch, err := ps.epoch(ctx)
	if err != nil {
		return nil, err
	}
	from, to := nanos(q.From), nanos(q.To)
	levels, err := ps.coverages(ctx, ids, from, to, step)
	if err != nil {
		return nil, err
	}
	halves := [][]uint64{ids[:len(ids)/2], ids[len(ids)/2:]}
	var parts [2]map[int64]*profseries.Merger
	read := func(fresh bool) error {
		g, gctx := errgroup.WithContext(ctx)
		for i, half := range halves {
			parts[i] = map[int64]*profseries.Merger{}
			into := func(start int64) *profseries.Merger {
				k := int64(0)
				if step > 0 {
					k = floorTo(start, step)
				}
				m := parts[i][k]
				if m == nil {
					m = &profseries.Merger{}
					parts[i][k] = m
				}
				return m
			}
			if len(half) > 0 {
				g.Go(func() error {
					// The first half reads in the read's view, the
					// second in one of its own (see sqlDB.fork).
					ctx := gctx
					if i > 0 {
						var done func()
						ctx, done = ps.b.fork(gctx)
						defer done()
					}
					return ps.mergePart(ctx, into, q, series, processes, levels, epoch, half, fresh)
				})
			}
		}
		return g.Wait()
	}
	err = read(false)
	if errors.Is(err, errStaleMark) {
		ps.staleMarks.Add(1)
		err = read(true) // a scrape stored while the range was read
	}
	if err != nil {
		return nil, err
	}
	steps := map[int64]*profseries.Merger{}
	for i := range parts {
		for k, part := range parts[i] {
			w, err := part.Window()
			if err != nil {
				return nil, err
			}
			m := steps[k]
			if m == nil {
				m = &profseries.Merger{}
				steps[k] = m
			}
			if err := m.Add(w); err != nil {
				return nil, err
			}
		}
	}
	out := make([]profseries.Window, 0, len(steps))
	for _, k := range slices.Sorted(maps.Keys(steps)) {
		w, err := steps[k].Window()
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// mergePart adds the blocks of the series ids (ascending) in q's range to
// the merger into returns for each block's start, the rollups of the
// buckets levels cover standing in for their blocks, and the merges of
// whole buckets kept (see profileseries_buckets.go) for those buckets: a
// bucket not kept yet is merged alone, then kept, where it merges more
// than one block.
func (ps *ProfileSeries) mergePart(ctx context.Context, into func(start int64) *profseries.Merger, q profseries.Query, series map[int64]profseries.Labels, processes map[int64]profseries.Process, levels []coverage, epoch int64, ids []uint64, fresh bool) error {
	from, to := nanos(q.From), nanos(q.To)
	dec := ps.decoder(ctx, q.Type)
	dec.fresh = fresh
	if n := len(levels); n > 0 && levels[n-1].level.width == int64(time.Minute) && !fresh {
		// The minutes' records read for the pieces key the chains'
		// marks too.
		m := levels[n-1]
		dec.marks = &chainMarks{epoch: epoch, vouched: m.vouched, known: m.records, records: map[seriesHour]string{}}
	}
	var spanFrom int64                              // the start of the piece being read
	var target func(start int64) *profseries.Merger // where its blocks go
	add := func(rows *sql.Rows) error {
		var seriesID, resolution, start, end, duration, processID, shapeID int64
		var data []byte
		if err := rows.Scan(&seriesID, &resolution, &start, &end, &duration, &processID, &shapeID, &data); err != nil {
			return err
		}
		if dec.ignored(seriesID, start) {
			return nil
		}
		if start < spanFrom {
			return dec.skip(seriesID, resolution, start, data)
		}
		shape, err := ps.shape(ctx, shapeID)
		if err != nil {
			return err
		}
		w := profseries.Window{Start: fromNanos(start), End: fromNanos(end), Duration: time.Duration(duration), Shape: shape,
			Processes: []profseries.TargetProcess{{Target: series[seriesID], Process: processes[processID]}}}
		return dec.add(target(start), seriesID, resolution, w, data)
	}
	const cols = `SELECT series_id, resolution, start_time, end_time, duration, process_id, shape_id, data FROM prof_blocks WHERE `
	// read adds the blocks (rollups of res, unless 0) of sp's series
	// starting in [from, to) to the mergers route returns, marking the
	// chains at the times of at (see begin).
	read := func(sp span, from, to int64, route func(start int64) *profseries.Merger, at []int64) error {
		res, args, readFrom := `resolution = ?`, []any{sp.res}, from
		if sp.res == 0 {
			froms := make(map[int64]int64, len(sp.series))
			for _, id := range sp.series {
				froms[int64(id)] = from
			}
			var err error
			if readFrom, err = dec.begin(froms, to, at); err != nil {
				return err
			}
			res, args = atResolutions, nil
		}
		spanFrom, target = from, route
		sq, args := inList(cols+res+` AND start_time >= ? AND start_time < ? AND series_id IN `, sp.series, append(args, readFrom, to)...)
		if err := ps.b.each(ctx, sq+` ORDER BY start_time`, args, add); err != nil {
			return fmt.Errorf("read profile blocks: %w", err)
		}
		if sp.res == 0 {
			dec.end(sp.series, to)
		}
		return nil
	}
	// readPieces reads pieces of sp, one after another, at once: each
	// whole bucket's blocks into a merger of its own, then kept (where it
	// merges more than one block), the rest into into.
	readPieces := func(sp span, pcs []piece) error {
		if len(pcs) == 0 {
			return nil
		}
		mergers := make([]*profseries.Merger, len(pcs))
		at := make([]int64, len(pcs))
		for i, pc := range pcs {
			if pc.key != "" {
				mergers[i] = &profseries.Merger{}
			}
			at[i] = pc.to
		}
		route := func(start int64) *profseries.Merger {
			i, _ := slices.BinarySearchFunc(pcs, start, func(pc piece, t int64) int { return cmp.Compare(pc.to, t+1) })
			if m := mergers[i]; m != nil {
				return m
			}
			return into(start)
		}
		if err := read(sp, pcs[0].from, pcs[len(pcs)-1].to, route, at); err != nil {
			return err
		}
		for i, m := range mergers {
			if m == nil || m.Windows() == 0 {
				continue
			}
			w, err := m.Window()
			if err != nil {
				return err
			}
			if m.Windows() > 1 {
				ps.buckets.put(pcs[i].key, w, windowSize(w)+len(pcs[i].key))
			}
			if err := into(pcs[i].from).Add(w); err != nil {
				return err
			}
		}
		return nil
	}
	for part := range chunks(ids, 500) {
		// The spans of blocks and of rollups, in order of time.
		spans := plan(part, levels, from, to)
		slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
		for _, sp := range spans {
			// The pieces not kept are read together, up to one kept.
			var unread []piece
			pcs := ps.pieces(sp, q.Type, epoch, levels)
			for i := 0; i < len(pcs); i++ {
				pc := pcs[i]
				if pc.key == "" {
					unread = append(unread, pc)
					continue
				}
				if pc.empty {
					continue // nothing was scraped in it
				}
				w, ok := ps.buckets.get(pc.key)
				if !ok {
					// A bucket closed lately (ten minutes not rolled
					// up yet), whose minutes were read as the range's
					// end passed them: made of their merges kept, or
					// read as its minutes, the next read's to join.
					w, ok = ps.joined(pc)
					if !ok && len(pc.parts) > 0 {
						pcs = slices.Insert(pcs, i+1, pc.parts...)
						continue
					}
				}
				if !ok {
					unread = append(unread, pc)
					continue
				}
				if err := readPieces(sp, unread); err != nil {
					return err
				}
				unread = unread[:0]
				if err := into(pc.from).Add(w); err != nil {
					return err
				}
			}
			if err := readPieces(sp, unread); err != nil {
				return err
			}
		}
	}
	return nil
}

// A span is a time range to read, for some series: their blocks at
// their resolutions (res 0), or their rollups of resolution res.
type span struct {
	series   []uint64
	from, to int64
	res      int64
}

// plan returns the spans of [from, to) to read for each of the series
// ids: each bucket of the widest level that covers it as that level's
// rollups, the rest as blocks; series with the same spans share them.
// levels are widest first.
func plan(ids []uint64, levels []coverage, from, to int64) []span {
	type piece struct{ from, to, res int64 }
	// The buckets each level covers, per series, in order: a run of
	// blocks goes up to the next of them.
	starts := make([]map[int64][]int64, len(levels))
	for i, c := range levels {
		starts[i] = map[int64][]int64{}
		for k, ok := range c.covered {
			if ok {
				starts[i][k.series] = append(starts[i][k.series], k.hour)
			}
		}
		for _, s := range starts[i] {
			slices.Sort(s)
		}
	}
	bySeries := map[piece]*span{}
	var order []piece
	for _, id := range ids {
		var pieces []piece
		for t := from; t < to; {
			p := piece{from: t, to: to}
			covered := false
			for _, c := range levels {
				w := c.level.width
				if t%w == 0 && t+w <= to && c.covered[seriesHour{int64(id), t}] {
					p.to, p.res, covered = t+w, c.level.resolution(), true
					break
				}
			}
			if !covered {
				// Blocks up to the next bucket a level covers.
				for i := range levels {
					s := starts[i][int64(id)]
					if j, _ := slices.BinarySearch(s, t+1); j < len(s) {
						p.to = min(p.to, s[j])
					}
				}
			}
			if n := len(pieces); n > 0 && pieces[n-1].to == t && pieces[n-1].res == p.res {
				pieces[n-1].to = p.to
			} else {
				pieces = append(pieces, p)
			}
			t = p.to
		}
		for _, p := range pieces {
			s := bySeries[p]
			if s == nil {
				s = &span{from: p.from, to: p.to, res: p.res}
				bySeries[p] = s
				order = append(order, p)
			}
			s.series = append(s.series, id)
		}
	}
	out := make([]span, 0, len(order))
	for _, k := range order {
		out = append(out, *bySeries[k])
	}
	return out
}

// processes reads every process stored, by id.
func (ps *ProfileSeries) processes(ctx context.Context) (map[int64]profseries.Process, error) {
	out := map[int64]profseries.Process{}
	err := ps.b.each(ctx, `SELECT id, build_id, generation FROM prof_processes`, nil, func(rows *sql.Rows) error {
		var id int64
		var p profseries.Process
		if err := rows.Scan(&id, &p.BuildID, &p.Generation); err != nil {
			return err
		}
		out[id] = p
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read processes: %w", err)
	}
	return out, nil
}

// rollUp makes the rollups of one series' whole buckets at each level
// (see rollupLevels) that end the level's delay before now and have none,
// or one out of date: those since the level's lookback before its newest
// rollup, or all it keeps when it has none; and deletes the rollups past
// their keep. recent, where not 0, checks rollups again only that far
// back. It returns how many it made at each level. One transaction: a
// crash leaves the series' rollups as they were.
func (ps *ProfileSeries) rollUp(ctx context.Context, series int64, now time.Time, recent time.Duration) ([]int, error) {
	made := make([]int, len(rollupLevels))
	stale := make([][]int64, len(rollupLevels))
	expired := make([]int64, len(rollupLevels)) // delete the level's rollups before
	work := false
	for i, level := range rollupLevels {
		limit := floorTo(nanos(now.Add(-level.delay)), level.width)
		first := int64(1)
		if level.keep > 0 {
			first = ceilTo(nanos(now.Add(-level.keep)), level.width)
		}
		var oldest, newest sql.NullInt64
		if err := ps.b.db.QueryRowContext(ctx, ps.b.q(`SELECT MIN(start_time), MAX(start_time) FROM prof_blocks WHERE series_id = ? AND resolution = ?`),
			series, level.resolution()).Scan(&oldest, &newest); err != nil {
			return made, err
		}
		if level.keep > 0 && oldest.Valid && oldest.Int64 < first {
			expired[i], work = first, true
		}
		back := level.lookback
		if recent > 0 {
			back = min(back, recent)
		}
		from := first
		switch {
		case level.keep > 0:
			// What is kept is checked back from now: after a pause
			// of the scraper, the rollups it missed are made.
			from = max(from, ceilTo(limit-int64(back), level.width))
		case newest.Valid:
			from = max(from, ceilTo(newest.Int64-int64(back), level.width))
		}
		if from >= limit {
			continue
		}
		var err error
		if stale[i], err = ps.staleBuckets(ctx, series, level, from, limit); err != nil {
			return made, err
		}
		work = work || len(stale[i]) > 0
	}
	if !work {
		return made, nil
	}
	tx, err := ps.b.db.BeginTx(ctx, nil)
	if err != nil {
		return made, err
	}
	defer tx.Rollback()
	// The scrapes recorded in each bucket are read beside its blocks,
	// with no scrape stored between (SQLite's writes run one at a time;
	// on PostgreSQL the exclusive lock waits for every Append to end).
	if err := ps.lock(ctx, tx, true); err != nil {
		return made, err
	}
	var typ string
	if err := tx.QueryRowContext(ctx, ps.b.q(`SELECT type FROM prof_series WHERE id = ?`), series).Scan(&typ); err != nil {
		return made, err
	}
	var total blockDelta
	for i, level := range rollupLevels {
		if expired[i] > 0 {
			d, err := ps.deleteRollups(ctx, tx, series, level.resolution(), 0, expired[i])
			if err != nil {
				return made, err
			}
			total.blocks, total.bytes = total.blocks+d.blocks, total.bytes+d.bytes
		}
		for _, h := range stale[i] {
			n, d, err := ps.makeRollups(ctx, tx, series, typ, level, h)
			if err != nil {
				return made, err
			}
			made[i] += n
			total.blocks, total.bytes = total.blocks+d.blocks, total.bytes+d.bytes
		}
	}
	// The rollups count in the series' summary: its blocks and bytes (a
	// rollup changes no time it spans nor the scrapes it counts).
	if _, err := tx.ExecContext(ctx, ps.b.q(`UPDATE prof_series SET blocks = blocks + ?, bytes = bytes + ? WHERE id = ?`), total.blocks, total.bytes, series); err != nil {
		return made, err
	}
	return made, tx.Commit()
}

// staleBuckets returns the buckets of level's width in [from, limit) of
// one series that have blocks and no rollups, or rollups out of date, in
// order: those its scrapes are recorded in by their records (see
// covered), those before by the blocks' sums.
func (ps *ProfileSeries) staleBuckets(ctx context.Context, series int64, level rollupLevel, from, limit int64) ([]int64, error) {
	ids := []uint64{uint64(series)}
	recordedFrom, err := ps.recordedFrom(ctx, ids)
	if err != nil {
		return nil, err
	}
	split := min(limit, max(from, ceilTo(recordedFrom, level.width)))
	var out []int64
	if from < split {
		blocks, rollups, err := ps.blockSums(ctx, ids, level, from, split)
		if err != nil {
			return nil, err
		}
		ok := rolledUp(blocks, rollups)
		for k := range blocks {
			if _, seen := ok[seriesHour{k.series, k.hour}]; !seen {
				ok[seriesHour{k.series, k.hour}] = false
			}
		}
		for k, good := range ok {
			if !good {
				out = append(out, k.hour)
			}
		}
	}
	if split < limit {
		cov, _, err := ps.covered(ctx, ids, level, split, limit)
		if err != nil {
			return nil, err
		}
		for k, good := range cov {
			if !good {
				out = append(out, k.hour)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// makeRollups makes, in tx, the rollups of level of one series of type
// typ for the bucket starting at h, one per process and shape of its
// blocks, in place of those it had; it returns how many, and what that
// adds to the series' summary.
func (ps *ProfileSeries) makeRollups(ctx context.Context, tx *sql.Tx, series int64, typ string, level rollupLevel, h int64) (made int, delta blockDelta, err error) {
	dec := ps.decoder(ctx, typ)
	if delta, err = ps.deleteRollups(ctx, tx, series, level.resolution(), h, h+level.width); err != nil {
		return 0, delta, err
	}
	type group struct {
		m     profseries.Merger
		raw   int64
		start int64
	}
	groups := map[[2]int64]*group{}
	var keys [][2]int64
	rows, err := tx.QueryContext(ctx, ps.b.q(`SELECT resolution, start_time, end_time, duration, process_id, shape_id, raw_bytes, data FROM prof_blocks
		WHERE series_id = ? AND `+atResolutions+` AND start_time >= ? AND start_time < ? ORDER BY start_time`), series, dec.readFrom(h), h+level.width)
	if err != nil {
		return 0, delta, err
	}
	for rows.Next() {
		var resolution, start, end, duration, process, shapeID, raw int64
		var data []byte
		if err := rows.Scan(&resolution, &start, &end, &duration, &process, &shapeID, &raw, &data); err != nil {
			rows.Close()
			return 0, delta, err
		}
		if start < h {
			// A block of the chain before the bucket, read only so
			// that the bucket's can be.
			if err := dec.skip(series, resolution, start, data); err != nil {
				rows.Close()
				return 0, delta, err
			}
			continue
		}
		shape, err := ps.shape(ctx, shapeID)
		if err != nil {
			rows.Close()
			return 0, delta, err
		}
		k := [2]int64{process, shapeID}
		g := groups[k]
		if g == nil {
			g = &group{start: start}
			groups[k] = g
			keys = append(keys, k)
		}
		if err := dec.add(&g.m, series, resolution, profseries.Window{Start: fromNanos(start), End: fromNanos(end), Duration: time.Duration(duration), Shape: shape}, data); err != nil {
			rows.Close()
			return 0, delta, err
		}
		g.raw += raw
		g.start = min(g.start, start)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, delta, err
	}
	counts, err := ps.bucketScrapes(ctx, tx, series, level.width, h)
	if err != nil {
		return 0, delta, err
	}
	for _, k := range keys {
		g := groups[k]
		w, err := g.m.Window()
		if err != nil {
			return 0, delta, err
		}
		var scrapes any // NULL: the bucket's scrapes are not recorded
		if n, ok := counts[k[0]]; ok {
			scrapes = n
		}
		n, err := ps.insertMerged(ctx, tx, typ, hourKey{series, g.start, k[0], k[1]}, level.resolution(), w, g.raw, scrapes)
		if err != nil {
			return 0, delta, fmt.Errorf("insert rollup: %w", err)
		}
		delta.blocks++
		delta.bytes += n
	}
	return len(keys), delta, nil
}

// A blockDelta is what a change to a series' blocks adds to its summary.
type blockDelta struct{ blocks, bytes int64 }

// deleteRollups deletes, in tx, the rollups of series at resolution res
// starting in [from, to), and returns what that takes from its summary.
func (ps *ProfileSeries) deleteRollups(ctx context.Context, tx *sql.Tx, series, res, from, to int64) (blockDelta, error) {
	var d blockDelta
	if err := tx.QueryRowContext(ctx, ps.b.q(ps.lengthFn(`SELECT COUNT(*), COALESCE(SUM(LENGTH(data)), 0) FROM prof_blocks
		WHERE series_id = ? AND resolution = ? AND start_time >= ? AND start_time < ?`)), series, res, from, to).Scan(&d.blocks, &d.bytes); err != nil {
		return d, err
	}
	if d.blocks == 0 {
		return d, nil
	}
	_, err := tx.ExecContext(ctx, ps.b.q(`DELETE FROM prof_blocks WHERE series_id = ? AND resolution = ? AND start_time >= ? AND start_time < ?`),
		series, res, from, to)
	return blockDelta{-d.blocks, -d.bytes}, err
}

// bucketScrapes reads, in tx, the scrapes prof_gauges records of series
// in the bucket of width starting at start, by process.
func (ps *ProfileSeries) bucketScrapes(ctx context.Context, tx *sql.Tx, series, width, start int64) (map[int64]int64, error) {
	rows, err := tx.QueryContext(ctx, ps.b.q(`SELECT process_id, scrapes FROM prof_gauges WHERE series_id = ? AND width = ? AND start_time = ?`), series, width, start)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var process, n int64
		if err := rows.Scan(&process, &n); err != nil {
			return nil, err
		}
		out[process] = n
	}
	return out, rows.Err()
}

// insertMerged stores the merged window w of a series of profile type
// typ as the block k names at resolution res, raw the raw bytes it
// merged, scrapes what a rollup records of its hour's scrapes (nil for a
// window of compaction); with its levels where it is one snapshot (see
// Levels). It returns the bytes of the block.
func (ps *ProfileSeries) insertMerged(ctx context.Context, tx *sql.Tx, typ string, k hourKey, res int64, w profseries.Window, raw int64, scrapes any) (int64, error) {
	var levels any // NULL where none are kept
	read := w
	read.Start = fromNanos(k.hour) // the window as a read finds it
	if l := profseries.EncodeLevels(typ, read); l != nil {
		levels = l
	}
	block, err := ps.codec().Encode(w.Samples, len(w.Shape.SampleTypes), w.Shape.Period)
	if err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, ps.b.q(`INSERT INTO prof_blocks
		(series_id, resolution, start_time, end_time, duration, process_id, shape_id, samples, raw_bytes, data, levels, scrapes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		k.series, res, k.hour, nanos(w.End), int64(w.Duration), k.process, k.shape, len(w.Samples), raw, block, levels, scrapes)
	return int64(len(block)), err
}

// scanStoredBlock reads a row of start_time, end_time, duration,
// process_id, shape_id, raw_bytes and data, as compaction and rollups
// select them.
func scanStoredBlock(rows *sql.Rows) (start, end, duration, process, shape, raw int64, data []byte, err error) {
	err = rows.Scan(&start, &end, &duration, &process, &shape, &raw, &data)
	return
}
