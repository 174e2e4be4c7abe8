package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Rollups: beside the blocks a series keeps at its resolutions, each whole
// hour of it is also kept merged into one block per process and shape, at
// resolution -resolutionHour, so that a merge over days reads one block an
// hour instead of hundreds. A rollup starts where the first block it
// merged starts (so a merge of rollups spans what the blocks span). A rollup is only ever a shortcut: it records
// the sums of duration and raw bytes of the blocks it merged (which
// compaction keeps), and a query uses it only while the hour's blocks
// still sum to the same, so a scrape stored late into a rolled-up hour
// makes the query read that hour's blocks until the rollup is made again.
// Windows, and the counts of ProfileTargets, never see rollups; retention
// and the budget delete them with their hour.
//
// A rollup also records how many scrapes of its process its hour had
// recorded (prof_gauges) when it was made (store migration 14). A query
// checks the rollups of the hours it reads against those records, a row
// per series, hour and process, instead of adding up every block of the
// hours: a scrape stored late into the hour is recorded, so the counts
// differ. Rollups made before, or of hours whose scrapes are not recorded
// (stored before migration10), are checked against the blocks' sums.
const (
	resolutionHour   = int64(time.Hour)
	resolutionRollup = -resolutionHour
	// rollupDelay is how long after its end an hour is rolled up: the
	// scrapes of its last seconds are stored by then.
	rollupDelay = 10 * time.Minute
	// rollupLookback is how far before a series' newest rollup its
	// rollups are checked again, for scrapes stored late.
	rollupLookback = 24 * time.Hour
)

// hourKey is one hour of one series' blocks of one process and shape
// (for a block, its start).
type hourKey struct{ series, hour, process, shape int64 }

// hourSums are the sums a rollup records of the blocks it merged.
type hourSums struct{ duration, raw int64 }

// blockSums reads, for the series ids and blocks starting in [from, to),
// the sums of each hour's blocks at their resolutions, and of its rollups.
func (ps *ProfileSeries) blockSums(ctx context.Context, ids []uint64, from, to int64) (blocks, rollups map[hourKey]hourSums, err error) {
	blocks, rollups = map[hourKey]hourSums{}, map[hourKey]hourSums{}
	for part := range chunks(ids, 500) {
		// The hour as a literal: PostgreSQL takes two parameters for two
		// expressions, and would not group by the one selected.
		const hour = `start_time / 3600000000000` // resolutionHour
		q, args := inList(`SELECT series_id, resolution < 0, process_id, shape_id, `+hour+`, SUM(duration), SUM(raw_bytes)
			FROM prof_blocks WHERE start_time >= ? AND start_time < ? AND series_id IN `, part, from, to)
		q += ` GROUP BY series_id, resolution < 0, process_id, shape_id, ` + hour
		err := ps.b.each(ctx, q, args, func(rows *sql.Rows) error {
			var k hourKey
			var rollup bool
			var s hourSums
			if err := rows.Scan(&k.series, &rollup, &k.process, &k.shape, &k.hour, &s.duration, &s.raw); err != nil {
				return err
			}
			k.hour *= resolutionHour
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

// seriesHour is one hour of one series.
type seriesHour struct{ series, hour int64 }

// rolledUp returns the hours of [from, to) whose rollups merge exactly the
// blocks stored in them: every process and shape the hour has blocks of
// has a rollup with the same sums, and no other rollup.
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

// coveredHours is rolledUp's answer for the series ids over the whole
// hours of [from, to), read from the rollups' records of their scrapes
// (see the comment at the top): an hour is covered when each process
// with scrapes recorded in it has rollups, each recording as many scrapes
// as are recorded now, and no rollup is of a process without. Hours
// before the series' scrapes were recorded, and hours with a rollup that
// records no count, are checked against the blocks' sums (blockSums).
func (ps *ProfileSeries) coveredHours(ctx context.Context, ids []uint64, from, to int64) (map[seriesHour]bool, error) {
	type hourProcess struct{ series, hour, process int64 }
	rolled := map[hourProcess]int64{} // each rollup's count; -1 where a shape's differs
	unknown := map[seriesHour]bool{}
	for part := range chunks(ids, 500) {
		q, args := inList(`SELECT series_id, start_time, process_id, scrapes FROM prof_blocks
			WHERE resolution = ? AND start_time >= ? AND start_time < ? AND series_id IN `, part, resolutionRollup, from, to)
		err := ps.b.each(ctx, q, args, func(rows *sql.Rows) error {
			var k hourProcess
			var n sql.NullInt64
			if err := rows.Scan(&k.series, &k.hour, &k.process, &n); err != nil {
				return err
			}
			k.hour = floorTo(k.hour, resolutionHour)
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
			return nil, fmt.Errorf("read rollups: %w", err)
		}
	}
	recordedFrom, err := ps.recordedFrom(ctx, ids)
	if err != nil {
		return nil, err
	}
	recorded, err := ps.gaugeRows(ctx, ids, gaugeHour, max(from, ceilTo(recordedFrom, resolutionHour)), to, rowGroup{})
	if err != nil {
		return nil, err
	}
	covered := map[seriesHour]bool{}
	for k := range rolled {
		covered[seriesHour{k.series, k.hour}] = true
	}
	counted := map[hourProcess]bool{}
	for _, r := range recorded {
		k := hourProcess{r.series, r.start, r.process}
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
	// Hours the records cannot vouch for: the blocks' sums decide.
	var check []uint64
	lo, hi := to, from
	for _, id := range ids {
		for h := from; h < to; h += resolutionHour {
			k := seriesHour{int64(id), h}
			if unknown[k] || (h < recordedFrom && covered[k]) {
				check = append(check, id)
				lo, hi = min(lo, h), max(hi, h+resolutionHour)
			}
		}
	}
	if len(check) > 0 {
		blocks, rollups, err := ps.blockSums(ctx, slices.Compact(check), lo, hi)
		if err != nil {
			return nil, err
		}
		bySums := rolledUp(blocks, rollups)
		for _, id := range slices.Compact(check) {
			for h := lo; h < hi; h += resolutionHour {
				k := seriesHour{int64(id), h}
				if unknown[k] || (h < recordedFrom && covered[k]) {
					covered[k] = bySums[k]
				}
			}
		}
	}
	return covered, nil
}

// mergeQuery merges every block q chooses: the rollups of the whole hours
// of the range that are up to date, and the blocks of the rest. It is
// what MergedProfile, Top and Diff read; the result is the merge of the
// windows Windows returns. A range merged lately is not read again while
// its series are as they were (see merges).
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

// mergeBlocks merges the blocks of series (ids, ascending) in q's range as
// they are read (see mergeQuery): the series in two halves at once, each
// merged as read, then the halves merged.
func (ps *ProfileSeries) mergeBlocks(ctx context.Context, q profseries.Query, series map[int64]profseries.Labels, ids []uint64) (profseries.Window, error) {
	processes, err := ps.knownProcesses(ctx)
	if err != nil {
		return profseries.Window{}, err
	}
	from, to := nanos(q.From), nanos(q.To)
	// The whole hours of the range, where rollups can stand in.
	hFrom, hTo := (from+resolutionHour-1)/resolutionHour*resolutionHour, to/resolutionHour*resolutionHour
	var covered map[seriesHour]bool
	if hTo > hFrom && from > 0 {
		if covered, err = ps.coveredHours(ctx, ids, hFrom, hTo); err != nil {
			return profseries.Window{}, err
		}
	}
	halves := [][]uint64{ids[:len(ids)/2], ids[len(ids)/2:]}
	var parts [2]profseries.Merger
	g, gctx := errgroup.WithContext(ctx)
	for i, half := range halves {
		if len(half) > 0 {
			g.Go(func() error { return ps.mergePart(gctx, &parts[i], q, series, processes, covered, half) })
		}
	}
	if err := g.Wait(); err != nil {
		return profseries.Window{}, err
	}
	var m profseries.Merger
	for i := range parts {
		if parts[i].Windows() == 0 {
			continue
		}
		w, err := parts[i].Window()
		if err != nil {
			return profseries.Window{}, err
		}
		if err := m.Add(w); err != nil {
			return profseries.Window{}, err
		}
	}
	if m.Windows() == 0 {
		return profseries.Window{}, fmt.Errorf("%w for %s %s from %s to %s", ErrNoProfiles, q.Type, q.Selector, q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
	}
	return m.Window()
}

// mergePart adds to m the blocks of the series ids (ascending) in q's
// range, the rollups of the hours covered standing in for their blocks.
func (ps *ProfileSeries) mergePart(ctx context.Context, m *profseries.Merger, q profseries.Query, series map[int64]profseries.Labels, processes map[int64]profseries.Process, covered map[seriesHour]bool, ids []uint64) error {
	from, to := nanos(q.From), nanos(q.To)
	hFrom, hTo := (from+resolutionHour-1)/resolutionHour*resolutionHour, to/resolutionHour*resolutionHour
	dec := ps.decoder(ctx, q.Type)
	var spanFrom int64 // the start of the span being read
	add := func(rows *sql.Rows) error {
		var seriesID, resolution, start, end, duration, processID, shapeID int64
		var data []byte
		if err := rows.Scan(&seriesID, &resolution, &start, &end, &duration, &processID, &shapeID, &data); err != nil {
			return err
		}
		if start < spanFrom {
			return dec.skip(seriesID, resolution, start, data)
		}
		rollup := resolution < 0
		if rollup != covered[seriesHour{seriesID, start / resolutionHour * resolutionHour}] {
			return nil // read the other way
		}
		shape, err := ps.shape(ctx, shapeID)
		if err != nil {
			return err
		}
		w := profseries.Window{Start: fromNanos(start), End: fromNanos(end), Duration: time.Duration(duration), Shape: shape,
			Processes: []profseries.TargetProcess{{Target: series[seriesID], Process: processes[processID]}}}
		return dec.add(m, seriesID, resolution, w, data)
	}
	const cols = `SELECT series_id, resolution, start_time, end_time, duration, process_id, shape_id, data FROM prof_blocks WHERE `
	for part := range chunks(ids, 500) {
		// Blocks outside the covered hours (the edges of the range, and
		// hours whose rollups are missing or out of date, as runs of
		// hours) and the rollups of the covered ones, in order of time.
		spans := uncovered(part, covered, from, to)
		if len(covered) > 0 {
			spans = append(spans, span{series: part, from: hFrom, to: hTo, rollups: true})
		}
		slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
		for _, sp := range spans {
			res, readFrom := atResolutions, dec.readFrom(sp.from)
			if sp.rollups {
				res, readFrom = `resolution < 0`, sp.from
			}
			spanFrom = sp.from
			sq, args := inList(cols+res+` AND start_time >= ? AND start_time < ? AND series_id IN `, sp.series, readFrom, sp.to)
			if err := ps.b.each(ctx, sq+` ORDER BY start_time`, args, add); err != nil {
				return fmt.Errorf("read profile blocks: %w", err)
			}
		}
	}
	return nil
}

// A span is a time range to read the blocks of, for some series.
type span struct {
	series   []uint64
	from, to int64
	rollups  bool // the span's rollups, not its blocks
}

// uncovered returns the ranges of [from, to) to read blocks of: per
// series, the runs of hours no up-to-date rollup covers; series with the
// same runs share a span.
func uncovered(ids []uint64, covered map[seriesHour]bool, from, to int64) []span {
	type run struct{ from, to int64 }
	bySeries := map[run]*span{}
	var order []run
	for _, id := range ids {
		var runs []run
		for t := from; t < to; {
			next := min(to, (t/resolutionHour+1)*resolutionHour)
			if !covered[seriesHour{int64(id), t / resolutionHour * resolutionHour}] || next-t < resolutionHour {
				if n := len(runs); n > 0 && runs[n-1].to == t {
					runs[n-1].to = next
				} else {
					runs = append(runs, run{t, next})
				}
			}
			t = next
		}
		for _, r := range runs {
			s := bySeries[r]
			if s == nil {
				s = &span{from: r.from, to: r.to}
				bySeries[r] = s
				order = append(order, r)
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

// rollUp makes the rollups of one series' whole hours that end
// rollupDelay before now and have none, or one out of date: those since
// rollupLookback before its newest rollup, or all when it has none. One
// transaction: a crash leaves the series' rollups as they were.
func (ps *ProfileSeries) rollUp(ctx context.Context, series int64, now time.Time) (int, error) {
	limit := nanos(now.Add(-rollupDelay)) / resolutionHour * resolutionHour
	var newest sql.NullInt64
	if err := ps.b.db.QueryRowContext(ctx, ps.b.q(`SELECT MAX(start_time) FROM prof_blocks WHERE series_id = ? AND resolution = ?`),
		series, resolutionRollup).Scan(&newest); err != nil {
		return 0, err
	}
	from := int64(1)
	if newest.Valid {
		from = max(1, newest.Int64-int64(rollupLookback))
	}
	if from >= limit {
		return 0, nil
	}
	blocks, rollups, err := ps.blockSums(ctx, []uint64{uint64(series)}, from, limit)
	if err != nil {
		return 0, err
	}
	ok := rolledUp(blocks, rollups)
	var hours []int64
	for h, good := range ok {
		if !good {
			hours = append(hours, h.hour)
		}
	}
	for k := range blocks {
		if _, seen := ok[seriesHour{k.series, k.hour}]; !seen {
			ok[seriesHour{k.series, k.hour}] = false
			hours = append(hours, k.hour)
		}
	}
	if len(hours) == 0 {
		return 0, nil
	}
	slices.Sort(hours)
	tx, err := ps.b.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	// The scrapes recorded in each hour are read beside its blocks, with
	// no scrape stored between (SQLite's writes run one at a time; on
	// PostgreSQL the exclusive lock waits for every Append to end).
	if err := ps.lock(ctx, tx, true); err != nil {
		return 0, err
	}
	var typ string
	if err := tx.QueryRowContext(ctx, ps.b.q(`SELECT type FROM prof_series WHERE id = ?`), series).Scan(&typ); err != nil {
		return 0, err
	}
	n := 0
	for _, h := range hours {
		dec := ps.decoder(ctx, typ)
		if _, err := tx.ExecContext(ctx, ps.b.q(`DELETE FROM prof_blocks WHERE series_id = ? AND resolution = ? AND start_time >= ? AND start_time < ?`),
			series, resolutionRollup, h, h+resolutionHour); err != nil {
			return 0, err
		}
		type group struct {
			m     profseries.Merger
			raw   int64
			start int64
		}
		groups := map[[2]int64]*group{}
		var keys [][2]int64
		rows, err := tx.QueryContext(ctx, ps.b.q(`SELECT resolution, start_time, end_time, duration, process_id, shape_id, raw_bytes, data FROM prof_blocks
			WHERE series_id = ? AND `+atResolutions+` AND start_time >= ? AND start_time < ? ORDER BY start_time`), series, h, h+resolutionHour)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			var resolution, start, end, duration, process, shapeID, raw int64
			var data []byte
			if err := rows.Scan(&resolution, &start, &end, &duration, &process, &shapeID, &raw, &data); err != nil {
				rows.Close()
				return 0, err
			}
			shape, err := ps.shape(ctx, shapeID)
			if err != nil {
				rows.Close()
				return 0, err
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
				return 0, err
			}
			g.raw += raw
			g.start = min(g.start, start)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
		counts, err := ps.hourScrapes(ctx, tx, series, h)
		if err != nil {
			return 0, err
		}
		for _, k := range keys {
			g := groups[k]
			w, err := g.m.Window()
			if err != nil {
				return 0, err
			}
			var scrapes any // NULL: the hour's scrapes are not recorded
			if n, ok := counts[k[0]]; ok {
				scrapes = n
			}
			if err := ps.insertMerged(ctx, tx, typ, hourKey{series, g.start, k[0], k[1]}, resolutionRollup, w, g.raw, scrapes); err != nil {
				return 0, fmt.Errorf("insert rollup: %w", err)
			}
			n++
		}
	}
	// The rollups' bytes count in the series' summary.
	if err := ps.summarize(ctx, tx, series); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// hourScrapes reads, in tx, the scrapes prof_gauges records of series in
// the hour starting at hour, by process.
func (ps *ProfileSeries) hourScrapes(ctx context.Context, tx *sql.Tx, series, hour int64) (map[int64]int64, error) {
	rows, err := tx.QueryContext(ctx, ps.b.q(`SELECT process_id, scrapes FROM prof_gauges WHERE series_id = ? AND width = ? AND start_time = ?`), series, gaugeHour, hour)
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
// Levels).
func (ps *ProfileSeries) insertMerged(ctx context.Context, tx *sql.Tx, typ string, k hourKey, res int64, w profseries.Window, raw int64, scrapes any) error {
	var levels any // NULL where none are kept
	read := w
	read.Start = fromNanos(k.hour) // the window as a read finds it
	if l := profseries.EncodeLevels(typ, read); l != nil {
		levels = l
	}
	block, err := ps.codec().Encode(w.Samples, len(w.Shape.SampleTypes), w.Shape.Period)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, ps.b.q(`INSERT INTO prof_blocks
		(series_id, resolution, start_time, end_time, duration, process_id, shape_id, samples, raw_bytes, data, levels, scrapes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		k.series, res, k.hour, nanos(w.End), int64(w.Duration), k.process, k.shape, len(w.Samples), raw, block, levels, scrapes)
	return err
}

// scanStoredBlock reads a row of start_time, end_time, duration,
// process_id, shape_id, raw_bytes and data, as compaction and rollups
// select them.
func scanStoredBlock(rows *sql.Rows) (start, end, duration, process, shape, raw int64, data []byte, err error) {
	err = rows.Scan(&start, &end, &duration, &process, &shape, &raw, &data)
	return
}
