package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Retention says how long profile series are kept at each resolution, and
// the most their data may take.
type Retention struct {
	// Raw is how long scrapes are kept as they came (every 10 s by
	// default); older ones are merged into windows of one minute.
	Raw time.Duration
	// Minute is how long one-minute windows are kept; older ones are
	// merged into windows of ten minutes.
	Minute time.Duration
	// TenMinutes is how long ten-minute windows are kept: older data is
	// deleted.
	TenMinutes time.Duration
	// Budget bounds the bytes of stored blocks and symbols; over it, the
	// oldest hour of data is dropped until under. 0: no budget.
	Budget int64
}

// DefaultRetention keeps scrapes as they came for 3 days, one-minute
// windows to 15 days, ten-minute windows to 60 days, and at most 8 GiB.
// Measured on the leftpad example with every default type
// (bench/scrape/size, an hour recorded and replayed to a day), a target
// takes about 6.5 MiB a day at full resolution once its hours are packed
// and 162 MiB once 60 days are kept (rollups included), so the budget holds about 50 such
// targets for the whole 60 days (a little fewer with the symbols a live
// service keeps adding, estimated at about 1.9 MiB a day more); beyond
// that it drops the oldest hours first. It is the floor under a disk that
// must never fill.
var DefaultRetention = Retention{Raw: 3 * 24 * time.Hour, Minute: 15 * 24 * time.Hour, TenMinutes: 60 * 24 * time.Hour, Budget: 8 << 30}

// The resolutions blocks are stored at: 0 for a scrape as it came.
const (
	resolutionMinute     = int64(time.Minute)
	resolutionTenMinutes = int64(10 * time.Minute)
)

// atResolutions is the condition of a query of the blocks a series keeps
// at its resolutions (not rollups) that starts in a range of time: each
// resolution named, so that the blocks' key (series_id, resolution,
// start_time, …) bounds the start time too, where "resolution >= 0" has
// a read scan every block of the series and filter them by time.
var atResolutions = fmt.Sprintf("resolution IN (0, %d, %d)", resolutionMinute, resolutionTenMinutes)

// day is the span of one PostgreSQL partition.
const day = int64(24 * time.Hour)

// budgetStep is what the budget drops at a time: the oldest hour.
const budgetStep = int64(time.Hour)

// A RetentionReport says what ApplyRetention did.
type RetentionReport struct {
	Compacted int // blocks merged into coarser windows
	RolledUp  int // hourly rollups made (see rollupLevels)
	// RolledUpTen counts the ten-minute rollups made.
	RolledUpTen int
	Packed      int   // blocks moved into packs (see profileseries_pack.go)
	Deleted     int   // blocks deleted for age or budget
	Collected   int   // stacks no block refers to any more, removed
	Bytes       int64 // bytes of blocks and symbols after
}

// ApplyRetention compacts and deletes what r keeps no longer at time now
// (a parameter, so that a month can be simulated), rolls up the hours
// and ten minutes that ended (see rollupLevels), drops the oldest data
// while over the budget, and removes the symbols no block needs any more.
// Each series' compaction is one transaction: a crash leaves each window
// either merged or not.
func (ps *ProfileSeries) ApplyRetention(ctx context.Context, now time.Time) (RetentionReport, error) {
	var rep RetentionReport
	r := ps.Retention
	series, err := ps.seriesIDs(ctx)
	if err != nil {
		return rep, fmt.Errorf("retention: %w", err)
	}
	for _, id := range series {
		for _, step := range []struct {
			from, to int64
			age      time.Duration
		}{{0, resolutionMinute, r.Raw}, {resolutionMinute, resolutionTenMinutes, r.Minute}} {
			if step.age <= 0 {
				continue
			}
			n, err := ps.compact(ctx, id, step.from, step.to, nanos(now.Add(-step.age)))
			if err != nil {
				return rep, fmt.Errorf("retention: compact series %d: %w", id, err)
			}
			rep.Compacted += n
		}
		made, err := ps.rollUp(ctx, id, now, 0)
		if err != nil {
			return rep, fmt.Errorf("retention: roll up series %d: %w", id, err)
		}
		rep.RolledUp += made[0]
		rep.RolledUpTen += made[1]
		var n int
		// Scrapes once their hour is past; one-minute windows once
		// compaction made their hour.
		limits := [][2]int64{{0, floorTo(nanos(now.Add(-packDelay)), packSpan)}}
		if r.Raw > 0 {
			limits = append(limits, [2]int64{resolutionMinute, floorTo(nanos(now.Add(-r.Raw)), packSpan)})
		}
		for _, l := range limits {
			if n, err = ps.pack(ctx, id, l[0], l[1]); err != nil {
				return rep, fmt.Errorf("retention: pack series %d: %w", id, err)
			}
			rep.Packed += n
		}
	}
	if r.TenMinutes > 0 {
		n, err := ps.deleteBefore(ctx, nanos(now.Add(-r.TenMinutes)))
		if err != nil {
			return rep, fmt.Errorf("retention: %w", err)
		}
		rep.Deleted += n
	}
	if rep.Collected, err = ps.collectSymbols(ctx); err != nil {
		return rep, fmt.Errorf("retention: %w", err)
	}
	for {
		if rep.Bytes, err = ps.storedBytes(ctx); err != nil {
			return rep, fmt.Errorf("retention: %w", err)
		}
		if r.Budget <= 0 || rep.Bytes <= r.Budget {
			return rep, nil
		}
		var oldest sql.NullInt64
		if err := ps.b.db.QueryRowContext(ctx, `SELECT MIN(start_time) FROM prof_blocks`).Scan(&oldest); err != nil {
			return rep, fmt.Errorf("retention: %w", err)
		}
		if !oldest.Valid {
			return rep, nil // symbols alone over the budget: nothing to drop
		}
		n, err := ps.deleteBefore(ctx, (oldest.Int64/budgetStep+1)*budgetStep)
		if err != nil {
			return rep, fmt.Errorf("retention: %w", err)
		}
		rep.Deleted += n
		c, err := ps.collectSymbols(ctx)
		if err != nil {
			return rep, fmt.Errorf("retention: %w", err)
		}
		rep.Collected += c
	}
}

// rollUpRecent is how far back RollUp checks rollups again for scrapes
// stored late; ApplyRetention checks as far as each level says.
const rollUpRecent = time.Hour

// RollUp makes the rollups of every series that ApplyRetention would
// make at time now (see rollupLevels), checking those of the last
// rollUpRecent only, and nothing else: a scraper runs it between passes
// of retention, so that the ten minutes just ended are read as one block
// a series soon after they end. The report counts only the
// rollups made.
func (ps *ProfileSeries) RollUp(ctx context.Context, now time.Time) (RetentionReport, error) {
	var rep RetentionReport
	series, err := ps.seriesIDs(ctx)
	if err != nil {
		return rep, fmt.Errorf("roll up: %w", err)
	}
	for _, id := range series {
		made, err := ps.rollUp(ctx, id, now, rollUpRecent)
		if err != nil {
			return rep, fmt.Errorf("roll up series %d: %w", id, err)
		}
		rep.RolledUp += made[0]
		rep.RolledUpTen += made[1]
	}
	return rep, nil
}

// seriesIDs reads the id of every series, in order.
func (ps *ProfileSeries) seriesIDs(ctx context.Context) ([]int64, error) {
	var series []int64
	err := ps.b.each(ctx, `SELECT id FROM prof_series ORDER BY id`, nil, func(rows *sql.Rows) error {
		series = append(series, 0)
		return rows.Scan(&series[len(series)-1])
	})
	return series, err
}

// compact merges the blocks of one series at resolution from that end
// before cutoff into windows of resolution to, per process and shape.
func (ps *ProfileSeries) compact(ctx context.Context, series, from, to, cutoff int64) (int, error) {
	tx, err := ps.b.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	type key struct{ window, process, shape int64 }
	type group struct {
		ws  []profseries.Window
		raw int64
	}
	groups := map[key]*group{}
	var keys []key
	// Only whole windows: one that cutoff cuts waits for the next pass.
	// Scrapes go by whole spans, so that none left is coded against one
	// gone (see base).
	limit := cutoff / to * to
	if from == 0 {
		limit = cutoff / packSpan * packSpan
	}
	// No scrape may be coded against one compaction removes: writers wait,
	// and then forget the blocks they stored (see checkEpoch).
	if err := ps.lock(ctx, tx, true); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE prof_meta SET value = value + 1 WHERE name = 'gc_epoch'`); err != nil {
		return 0, err
	}
	var typ string
	if err := tx.QueryRowContext(ctx, ps.b.q(`SELECT type FROM prof_series WHERE id = ?`), series).Scan(&typ); err != nil {
		return 0, err
	}
	dec := ps.decoder(ctx, typ)
	rows, err := tx.QueryContext(ctx, ps.b.q(`SELECT start_time, end_time, duration, process_id, shape_id, raw_bytes, data FROM prof_blocks
		WHERE series_id = ? AND resolution = ? AND start_time < ? ORDER BY start_time`), series, from, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for rows.Next() {
		start, end, duration, process, shapeID, raw, data, err := scanStoredBlock(rows)
		if err != nil {
			rows.Close()
			return 0, err
		}
		samples, err := dec.samples(series, from, start, data)
		if err != nil {
			rows.Close()
			return 0, err
		}
		shape, err := ps.shape(ctx, shapeID)
		if err != nil {
			rows.Close()
			return 0, err
		}
		k := key{start / to * to, process, shapeID}
		g := groups[k]
		if g == nil {
			g = &group{}
			groups[k] = g
			keys = append(keys, k)
		}
		g.ws = append(g.ws, profseries.Window{Start: fromNanos(start), End: fromNanos(end), Duration: time.Duration(duration), Shape: shape, Samples: samples})
		g.raw += raw
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	for _, k := range keys {
		g := groups[k]
		// A window of the coarser resolution may exist already, when a
		// scrape arrived after its window was merged: merge into it.
		var end, duration, raw int64
		var data []byte
		err := tx.QueryRowContext(ctx, ps.b.q(`SELECT end_time, duration, raw_bytes, data FROM prof_blocks
			WHERE series_id = ? AND resolution = ? AND start_time = ? AND process_id = ? AND shape_id = ?`),
			series, to, k.window, k.process, k.shape).Scan(&end, &duration, &raw, &data)
		switch {
		case err == nil:
			samples, err := dec.samples(series, to, k.window, data)
			if err != nil {
				return 0, err
			}
			g.ws = append(g.ws, profseries.Window{Start: fromNanos(k.window), End: fromNanos(end), Duration: time.Duration(duration), Shape: g.ws[0].Shape, Samples: samples})
			g.raw += raw
			if _, err := tx.ExecContext(ctx, ps.b.q(`DELETE FROM prof_blocks WHERE series_id = ? AND resolution = ? AND start_time = ? AND process_id = ? AND shape_id = ?`),
				series, to, k.window, k.process, k.shape); err != nil {
				return 0, err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return 0, err
		}
		m, err := profseries.Merge(g.ws)
		if err != nil {
			return 0, err
		}
		if _, err := ps.insertMerged(ctx, tx, typ, hourKey{series, k.window, k.process, k.shape}, to, m, g.raw, nil); err != nil {
			return 0, fmt.Errorf("insert window: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, ps.b.q(`DELETE FROM prof_blocks WHERE series_id = ? AND resolution = ? AND start_time < ?`), series, from, limit); err != nil {
		return 0, err
	}
	// Every window made starts before limit (see compactedIn).
	if _, err := tx.ExecContext(ctx, ps.b.q(`UPDATE prof_meta SET value = ? WHERE name = 'compacted_to' AND value < ?`), limit, limit); err != nil {
		return 0, err
	}
	if from == 0 {
		// Request counts and records of single scrapes are kept per
		// scrape only.
		for _, stmt := range []string{
			`DELETE FROM prof_requests WHERE series_id = ? AND start_time < ?`,
			`DELETE FROM prof_gauges WHERE series_id = ? AND width = 0 AND start_time < ?`,
		} {
			if _, err := tx.ExecContext(ctx, ps.b.q(stmt), series, limit); err != nil {
				return 0, err
			}
		}
	}
	// Packs go with the last block of their hour.
	if _, err := tx.ExecContext(ctx, ps.b.q(`DELETE FROM prof_packs WHERE series_id = ? AND resolution = ? AND start_time <= ?`), series, from, limit-packSpan); err != nil {
		return 0, err
	}
	if err := ps.summarize(ctx, tx, series); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// deleteBefore deletes every block that starts before t: on PostgreSQL,
// whole day partitions are dropped, and the rows of a partition t cuts
// deleted.
func (ps *ProfileSeries) deleteBefore(ctx context.Context, t int64) (int, error) {
	var n int
	const which = `WHERE start_time < ? AND (resolution <> 0 OR start_time < ?)`
	if err := ps.b.db.QueryRowContext(ctx, ps.b.q(`SELECT COUNT(*) FROM prof_blocks `+which), t, t/packSpan*packSpan).Scan(&n); err != nil {
		return 0, err
	}
	// Scrapes go by whole spans, so that none left is coded against one
	// gone (see base); coarser windows by the time asked.
	span := t / packSpan * packSpan
	if ps.b.d.name == "postgres" {
		days, err := ps.partitions(ctx)
		if err != nil {
			return 0, err
		}
		for _, d := range days {
			if (d+1)*day <= span {
				if _, err := ps.b.db.ExecContext(ctx, `DROP TABLE IF EXISTS `+partitionName(d)); err != nil {
					return 0, fmt.Errorf("drop partition: %w", err)
				}
				ps.mu.Lock()
				delete(ps.cache.days, d)
				ps.mu.Unlock()
			}
		}
	}
	if _, err := ps.b.db.ExecContext(ctx, ps.b.q(`DELETE FROM prof_blocks `+which), t, span); err != nil {
		return 0, err
	}
	// Packs go with their hour: raw scrapes by the span, windows once
	// the last of their hour goes.
	if _, err := ps.b.db.ExecContext(ctx, ps.b.q(`DELETE FROM prof_packs WHERE (resolution = 0 AND start_time < ?) OR start_time <= ?`), span, t-packSpan); err != nil {
		return 0, err
	}
	if _, err := ps.b.db.ExecContext(ctx, ps.b.q(`DELETE FROM prof_requests WHERE start_time < ?`), t); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	tx, err := ps.exclusiveTx(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if err := ps.forgetBefore(ctx, tx, t); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// exclusiveTx begins a transaction that holds the exclusive lock (see
// lock).
func (ps *ProfileSeries) exclusiveTx(ctx context.Context) (*sql.Tx, error) {
	tx, err := ps.b.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if err := ps.lock(ctx, tx, true); err != nil {
		tx.Rollback()
		return nil, err
	}
	return tx, nil
}

// collectSymbols removes stacks no block refers to, then the locations,
// functions and mappings no remaining stack refers to, and shapes and
// processes no block names. A stack's last_seen is the start of the
// newest scrape that used it (at most lastSeenSlack stale) and blocks go
// oldest first, so a stack last seen before the oldest block is used by
// none. It bumps the collection epoch, so every process drops the ids it
// remembered.
func (ps *ProfileSeries) collectSymbols(ctx context.Context) (int, error) {
	tx, err := ps.exclusiveTx(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var oldest sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MIN(start_time) FROM prof_blocks`).Scan(&oldest); err != nil {
		return 0, err
	}
	q, args := `DELETE FROM prof_stacks`, []any{}
	if oldest.Valid {
		cutoff := oldest.Int64 - int64(lastSeenSlack)
		if err := ps.keepLabelSets(ctx, tx, cutoff); err != nil {
			return 0, err
		}
		q, args = ps.b.q(`DELETE FROM prof_stacks WHERE last_seen < ?`), []any{cutoff}
	}
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("collect stacks: %w", err)
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		if err := ps.collectUnreferenced(ctx, tx); err != nil {
			return 0, err
		}
	}
	for _, stmt := range []string{
		`DELETE FROM prof_shapes WHERE id NOT IN (SELECT DISTINCT shape_id FROM prof_blocks)`,
		`DELETE FROM prof_processes WHERE id NOT IN (SELECT DISTINCT process_id FROM prof_blocks)`,
		`DELETE FROM prof_gauges WHERE series_id IN (SELECT id FROM prof_series WHERE id NOT IN (SELECT DISTINCT series_id FROM prof_blocks))`,
		`DELETE FROM prof_series WHERE id NOT IN (SELECT DISTINCT series_id FROM prof_blocks)`,
		`DELETE FROM prof_packs WHERE series_id NOT IN (SELECT id FROM prof_series)`,
		`UPDATE prof_meta SET value = value + 1 WHERE name = 'gc_epoch'`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return 0, fmt.Errorf("collect: %w", err)
		}
	}
	return int(n), tx.Commit()
}

// keepLabelSets moves the last_seen of label sets older than cutoff to
// cutoff where a stack kept refers to them: a stack stored as a node is
// read with its label set, a stack of its own.
func (ps *ProfileSeries) keepLabelSets(ctx context.Context, tx *sql.Tx, cutoff int64) error {
	var old int64
	if err := tx.QueryRowContext(ctx, ps.b.q(`SELECT COUNT(*) FROM prof_stacks WHERE last_seen < ?`), cutoff).Scan(&old); err != nil {
		return fmt.Errorf("collect stacks: %w", err)
	}
	if old == 0 {
		return nil
	}
	sets := map[uint64]bool{}
	rows, err := tx.QueryContext(ctx, ps.b.q(`SELECT id, data FROM prof_stacks WHERE last_seen >= ?`), cutoff)
	if err != nil {
		return fmt.Errorf("collect stacks: %w", err)
	}
	for rows.Next() {
		var id int64
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			rows.Close()
			return fmt.Errorf("collect stacks: %w", err)
		}
		set, _, _, err := profseries.StackRefs(data)
		if err != nil {
			rows.Close()
			return fmt.Errorf("collect stacks: stack %d: %w", id, err)
		}
		if set != 0 {
			sets[set] = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("collect stacks: %w", err)
	}
	keep := slices.Sorted(maps.Keys(sets))
	for ids := range chunks(keep, 500) {
		q, args := inList(`UPDATE prof_stacks SET last_seen = ? WHERE last_seen < ? AND id IN `, ids, cutoff, cutoff)
		if _, err := tx.ExecContext(ctx, ps.b.q(q), args...); err != nil {
			return fmt.Errorf("keep label sets: %w", err)
		}
	}
	return nil
}

// collectUnreferenced removes the locations no stack refers to, then the
// functions and mappings no location refers to, reading the remaining
// stacks and locations (far fewer than blocks).
func (ps *ProfileSeries) collectUnreferenced(ctx context.Context, tx *sql.Tx) error {
	refs := func(table string, decode func([]byte) ([]uint64, []uint64, error)) (a, b map[uint64]bool, err error) {
		a, b = map[uint64]bool{}, map[uint64]bool{}
		rows, err := tx.QueryContext(ctx, `SELECT data FROM `+table)
		if err != nil {
			return nil, nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var data []byte
			if err := rows.Scan(&data); err != nil {
				return nil, nil, err
			}
			x, y, err := decode(data)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", table, err)
			}
			for _, id := range x {
				a[id] = true
			}
			for _, id := range y {
				b[id] = true
			}
		}
		return a, b, rows.Err()
	}
	sweep := func(table string, keep map[uint64]bool) error {
		var gone []uint64
		rows, err := tx.QueryContext(ctx, `SELECT id FROM `+table)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			if !keep[uint64(id)] {
				gone = append(gone, uint64(id))
			}
		}
		rows.Close()
		for part := range chunks(gone, 500) {
			q, args := inList(`DELETE FROM `+table+` WHERE id IN `, part)
			if _, err := tx.ExecContext(ctx, ps.b.q(q), args...); err != nil {
				return fmt.Errorf("collect %s: %w", table, err)
			}
		}
		return nil
	}
	// Stacks name their callers, callers theirs: the callers kept are
	// those a stack's chain reaches.
	callers, locs, err := refs("prof_stacks", func(b []byte) ([]uint64, []uint64, error) {
		_, caller, ids, err := profseries.StackRefs(b)
		if caller == 0 {
			return nil, ids, err
		}
		return []uint64{caller}, ids, err
	})
	if err != nil {
		return err
	}
	tree := map[uint64][2]uint64{} // caller to its own caller and leaf
	rows, err := tx.QueryContext(ctx, `SELECT id, data FROM prof_callers`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			rows.Close()
			return err
		}
		caller, leaf, err := profseries.CallerRefs(data)
		if err != nil {
			rows.Close()
			return fmt.Errorf("prof_callers: %w", err)
		}
		tree[uint64(id)] = [2]uint64{caller, leaf}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// Each caller is visited once: a loop ends where it began.
	todo := slices.Collect(maps.Keys(callers))
	for len(todo) > 0 {
		id := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		n := tree[id]
		locs[n[1]] = true
		if n[0] != 0 && !callers[n[0]] {
			callers[n[0]] = true
			todo = append(todo, n[0])
		}
	}
	if err := sweep("prof_callers", callers); err != nil {
		return err
	}
	if err := sweep("prof_locations", locs); err != nil {
		return err
	}
	fns, maps, err := refs("prof_locations", profseries.LocationRefs)
	if err != nil {
		return err
	}
	if err := sweep("prof_functions", fns); err != nil {
		return err
	}
	return sweep("prof_mappings", maps)
}

// storedBytes is the size of what profile series store: blocks (with the
// levels kept beside snapshots), packs and symbols, as the bytes of their data;
// the budget is counted in these.
func (ps *ProfileSeries) storedBytes(ctx context.Context) (int64, error) {
	var total int64
	for _, t := range append(slices.Clone(symbolTables[:]), "prof_blocks", "prof_packs") {
		size := `LENGTH(data)`
		if t == "prof_blocks" {
			size += ` + COALESCE(LENGTH(levels), 0)` // the levels kept beside snapshots
		}
		var n sql.NullInt64
		if err := ps.b.db.QueryRowContext(ctx, ps.lengthFn(`SELECT SUM(`+size+`) FROM `+t)).Scan(&n); err != nil {
			return 0, err
		}
		total += n.Int64
	}
	return total, nil
}

// partitionName is the PostgreSQL partition of blocks starting on day d
// (days since the Unix epoch).
func partitionName(d int64) string { return "prof_blocks_d" + strconv.FormatInt(d, 10) }

// ensurePartition creates, on PostgreSQL, the partition of the day t is in
// and of the next, so writes never wait on one as time advances.
func (ps *ProfileSeries) ensurePartition(ctx context.Context, t time.Time) error {
	if ps.b.d.name != "postgres" {
		return nil
	}
	d := nanos(t) / day
	for _, d := range []int64{d, d + 1} {
		ps.mu.Lock()
		known := ps.cache.days[d]
		ps.mu.Unlock()
		if known {
			continue
		}
		_, err := ps.b.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+partitionName(d)+` PARTITION OF prof_blocks FOR VALUES FROM (`+
			strconv.FormatInt(d*day, 10)+`) TO (`+strconv.FormatInt((d+1)*day, 10)+`)`)
		if err != nil {
			// Another writer may have created it in between.
			var exists bool
			if qerr := ps.b.db.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, partitionName(d)).Scan(&exists); qerr != nil || !exists {
				return fmt.Errorf("create partition %s: %w", partitionName(d), err)
			}
		}
		ps.mu.Lock()
		ps.cache.days[d] = true
		ps.mu.Unlock()
	}
	return nil
}

// partitions lists the days of the existing partitions of prof_blocks.
func (ps *ProfileSeries) partitions(ctx context.Context) ([]int64, error) {
	var days []int64
	err := ps.b.each(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = to_regclass('prof_blocks')`, nil, func(rows *sql.Rows) error {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		var d int64
		if _, err := fmt.Sscanf(name, "prof_blocks_d%d", &d); err == nil {
			days = append(days, d)
		}
		return nil
	})
	return days, err
}
