package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Records of scrapes (migration10): as a scrape is stored, Append adds it
// to prof_gauges — as one row of its own (width 0) and to the buckets of a
// minute, ten minutes and an hour it starts in — with its gauge's total
// (profseries.GaugeOf), and to its series' summary in prof_series. The
// pages over many targets read those instead of every block:
// GaugeSeries reads a row per series and step, ProcessSpans a row per
// series, process and hour, ProfileTargets a row per series.
//
// The records describe the scrapes as they were stored, whatever
// compaction makes of their blocks: a minute or ten-minute window merged
// from six or sixty scrapes still counts six or sixty (decoding it
// counts one, and a snapshot gauge's mean would be their sum), and its
// scrapes keep their own times. Before compaction the records and the
// decoded blocks give the same numbers exactly. Compaction of scrapes
// removes their rows of width 0 (as it does their request counts), and
// queries at steps under a minute read those minutes' buckets, at the
// minute's start, where decoding would find the merged window; rollups
// change nothing here. Retention's deletion of old data moves each series'
// recorded_from to the hour after the time it deleted before, and the
// summaries are computed again from the blocks whenever compaction, rollups
// or deletion change a series' blocks.
//
// A series stored before migration10 has its scrapes until recorded_from
// unrecorded: over that time the queries decode the blocks (GaugeSeries)
// or aggregate their keys (ProcessSpans), as they did before.
const (
	gaugeScrape     = int64(0)
	gaugeMinute     = int64(time.Minute)
	gaugeTenMinutes = int64(10 * time.Minute)
	gaugeHour       = int64(time.Hour)
)

// gaugeWidths are the widths of the buckets each scrape is added to.
var gaugeWidths = []int64{gaugeScrape, gaugeMinute, gaugeTenMinutes, gaugeHour}

// record adds the scrape s, stored in series as block (of its samples),
// of shape, with its levels where kept, to prof_gauges and to the series'
// summary; in the Append's transaction. A bucket wider than a scrape
// keeps the shape and levels of its first scrape (migration17).
func (ps *ProfileSeries) record(ctx context.Context, tx *sql.Tx, series, process, shape int64, s *profseries.Scrape, samples []profseries.Sample, block, levels []byte) error {
	var gauged, total, duration int64
	if g, ok := profseries.GaugeOf(s.Type); ok {
		if t, ok := g.ScrapeTotal(s.Profile, samples); ok {
			gauged, total, duration = 1, t, int64(s.End.Sub(s.Start))
		}
	}
	start, end := nanos(s.Start), nanos(s.End)
	q := `INSERT INTO prof_gauges (series_id, width, start_time, process_id, first_start, last_end, scrapes, gauged, total, duration, first_shape, first_levels) VALUES `
	var args []any
	for i, w := range gaugeWidths {
		if i > 0 {
			q += `, `
		}
		q += `(?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`
		bucket := start
		var firstShape, firstLevels any // NULL for a scrape's own row (its block keeps them), and where none are kept
		if w > 0 {
			bucket = floorTo(start, w)
			if levels != nil {
				firstShape, firstLevels = shape, levels
			}
		}
		args = append(args, series, w, bucket, process, start, end, gauged, total, duration, firstShape, firstLevels)
	}
	q += ` ON CONFLICT (series_id, width, start_time, process_id) DO UPDATE SET
		first_shape = CASE WHEN excluded.first_start < prof_gauges.first_start THEN excluded.first_shape ELSE prof_gauges.first_shape END,
		first_levels = CASE WHEN excluded.first_start < prof_gauges.first_start THEN excluded.first_levels ELSE prof_gauges.first_levels END,
		first_start = CASE WHEN excluded.first_start < prof_gauges.first_start THEN excluded.first_start ELSE prof_gauges.first_start END,
		last_end = CASE WHEN excluded.last_end > prof_gauges.last_end THEN excluded.last_end ELSE prof_gauges.last_end END,
		scrapes = prof_gauges.scrapes + excluded.scrapes, gauged = prof_gauges.gauged + excluded.gauged,
		total = prof_gauges.total + excluded.total, duration = prof_gauges.duration + excluded.duration`
	if _, err := tx.ExecContext(ctx, ps.b.q(q), args...); err != nil {
		return fmt.Errorf("record scrape: %w", err)
	}
	if _, err := tx.ExecContext(ctx, ps.b.q(`UPDATE prof_series SET
		first_time = CASE WHEN blocks = 0 OR ? < first_time THEN ? ELSE first_time END,
		last_time = CASE WHEN blocks = 0 OR ? > last_time THEN ? ELSE last_time END,
		scrapes = scrapes + 1, blocks = blocks + 1, bytes = bytes + ? WHERE id = ?`),
		start, start, end, end, len(block), series); err != nil {
		return fmt.Errorf("record scrape in its series: %w", err)
	}
	return nil
}

// floorTo rounds t down to a multiple of w; ceilTo up.
func floorTo(t, w int64) int64 { return t / w * w }
func ceilTo(t, w int64) int64  { return (t + w - 1) / w * w }

// summarize computes the summaries of series (every series when none is
// named) again from their blocks, in tx: after compaction, rollups or
// deletion changed them. tx holds the exclusive lock (see lock), so that
// no Append adds to a summary between the read and the write.
func (ps *ProfileSeries) summarize(ctx context.Context, tx *sql.Tx, series ...int64) error {
	q := `UPDATE prof_series SET first_time = 0, last_time = 0, scrapes = 0, blocks = 0, bytes = 0`
	sums := ps.lengthFn(`SELECT series_id, MIN(start_time), MAX(end_time), SUM(CASE WHEN resolution >= 0 THEN 1 ELSE 0 END), COUNT(*), SUM(LENGTH(data))
		FROM prof_blocks`)
	var args []any
	if len(series) == 1 {
		q += ` WHERE id = ?`
		sums += ` WHERE series_id = ?`
		args = append(args, series[0])
	} else if len(series) > 1 {
		return fmt.Errorf("summarize: one series or all")
	}
	if _, err := tx.ExecContext(ctx, ps.b.q(q), args...); err != nil {
		return fmt.Errorf("summarize series: %w", err)
	}
	type summary struct{ series, first, last, scrapes, blocks, bytes int64 }
	var all []summary
	rows, err := tx.QueryContext(ctx, ps.b.q(sums+` GROUP BY series_id`), args...)
	if err != nil {
		return fmt.Errorf("summarize series: %w", err)
	}
	for rows.Next() {
		var s summary
		if err := rows.Scan(&s.series, &s.first, &s.last, &s.scrapes, &s.blocks, &s.bytes); err != nil {
			rows.Close()
			return err
		}
		all = append(all, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// What a series' packs hold is its blocks' too.
	packs := ps.lengthFn(`SELECT series_id, SUM(LENGTH(data)) FROM prof_packs`)
	if len(series) == 1 {
		packs += ` WHERE series_id = ?`
	}
	packed := map[int64]int64{}
	rows, err = tx.QueryContext(ctx, ps.b.q(packs+` GROUP BY series_id`), args...)
	if err != nil {
		return fmt.Errorf("summarize series: %w", err)
	}
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return err
		}
		packed[id] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range all {
		all[i].bytes += packed[all[i].series]
	}
	for _, s := range all {
		if _, err := tx.ExecContext(ctx, ps.b.q(`UPDATE prof_series SET first_time = ?, last_time = ?, scrapes = ?, blocks = ?, bytes = ? WHERE id = ?`),
			s.first, s.last, s.scrapes, s.blocks, s.bytes, s.series); err != nil {
			return fmt.Errorf("summarize series: %w", err)
		}
	}
	return nil
}

// forgetBefore, after retention deleted the blocks before t, deletes the
// records of the hours t is in or before and the judgements of deploys
// before t, and has every series' queries decode its blocks before the
// next hour (their records are gone); tx holds the exclusive lock.
func (ps *ProfileSeries) forgetBefore(ctx context.Context, tx *sql.Tx, t int64) error {
	h := ceilTo(t, gaugeHour)
	if _, err := tx.ExecContext(ctx, ps.b.q(`DELETE FROM prof_gauges WHERE start_time < ?`), h); err != nil {
		return fmt.Errorf("forget records: %w", err)
	}
	if err := ps.changedRecords(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, ps.b.q(`DELETE FROM prof_deploys WHERE at < ?`), t); err != nil {
		return fmt.Errorf("forget judged deploys: %w", err)
	}
	if _, err := tx.ExecContext(ctx, ps.b.q(`UPDATE prof_series SET recorded_from = ? WHERE recorded_from < ?`), h, h); err != nil {
		return fmt.Errorf("forget records: %w", err)
	}
	return ps.summarize(ctx, tx)
}

// A gaugeRow is one row of prof_gauges.
type gaugeRow struct {
	series, start, process int64
	first, last            int64
	scrapes, gauged, total int64
	duration               int64
}

// compactedIn says whether any of the series ids has a window compaction
// made (of a minute or ten) starting in [from, to): none where from is
// past the time compaction has reached (one row read, prof_meta's
// compacted_to), else a read of a key or two per series.
func (ps *ProfileSeries) compactedIn(ctx context.Context, ids []uint64, from, to int64) (bool, error) {
	var reached int64
	if err := ps.b.reader(ctx).QueryRowContext(ctx, `SELECT value FROM prof_meta WHERE name = 'compacted_to'`).Scan(&reached); err != nil {
		return false, fmt.Errorf("read compacted blocks: %w", err)
	}
	ps.b.rowsRead.Add(1)
	if from >= reached {
		return false, nil
	}
	for part := range chunks(ids, 500) {
		sq, args := inList(`SELECT 1 FROM prof_blocks WHERE resolution IN (?, ?) AND start_time >= ? AND start_time < ? AND series_id IN `,
			part, resolutionMinute, resolutionTenMinutes, from, to)
		found := false
		if err := ps.b.each(ctx, sq+` LIMIT 1`, args, func(*sql.Rows) error { found = true; return nil }); err != nil {
			return false, fmt.Errorf("read compacted blocks: %w", err)
		}
		if found {
			return true, nil
		}
	}
	return false, nil
}

// A rowGroup says how gaugeRows adds up the rows it reads, in the query:
// not at all (the zero rowGroup), by series and process (each group's
// first start and last end, for spans), or by series and step (the sums
// of each step since the epoch, for gauges), or by step alone across the
// series read (for a chart adding them up). A group is returned as a row
// of its sums: its start is the step's (or the earliest row's), its
// process 0 where grouped by step, its series 0 where across series.
type rowGroup struct {
	byProcess    bool
	step         int64
	acrossSeries bool
}

// gaugeRows reads the rows of width of the series ids starting in
// [from, to), added up by g.
func (ps *ProfileSeries) gaugeRows(ctx context.Context, ids []uint64, width, from, to int64, g rowGroup) ([]gaugeRow, error) {
	if from >= to || len(ids) == 0 {
		return nil, nil
	}
	return ps.keptRows(ctx, ids, width, from, to, g)
}

// readGaugeRows is gaugeRows, read.
func (ps *ProfileSeries) readGaugeRows(ctx context.Context, ids []uint64, width, from, to int64, g rowGroup) ([]gaugeRow, error) {
	var out []gaugeRow
	const sums = `MIN(first_start), MAX(last_end), SUM(scrapes), SUM(gauged), SUM(total), SUM(duration)`
	cols, group := `series_id, start_time, process_id, first_start, last_end, scrapes, gauged, total, duration`, ``
	var colArgs []any
	switch {
	case g.byProcess:
		cols, group = `series_id, MIN(start_time), process_id, `+sums, ` GROUP BY series_id, process_id`
	case g.step > 0 && g.acrossSeries:
		cols, group = `0, start_time / ? * ?, 0, `+sums, ` GROUP BY 2`
		colArgs = []any{g.step, g.step}
	case g.step > 0:
		// Grouped by position: PostgreSQL would not take the step's
		// expression, parameters and all, as the one selected.
		cols, group = `series_id, start_time / ? * ?, 0, `+sums, ` GROUP BY 1, 2`
		colArgs = []any{g.step, g.step}
	}
	for part := range chunks(ids, 500) {
		q, args := inList(`SELECT `+cols+` FROM prof_gauges
			WHERE width = ? AND start_time >= ? AND start_time < ? AND series_id IN `, part, append(colArgs, width, from, to)...)
		err := ps.b.each(ctx, q+group, args, func(rows *sql.Rows) error {
			var r gaugeRow
			if err := rows.Scan(&r.series, &r.start, &r.process, &r.first, &r.last, &r.scrapes, &r.gauged, &r.total, &r.duration); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read scrape records: %w", err)
		}
	}
	return out, nil
}

// recorded reads the records of the scrapes of the series ids starting
// in [from, to), in buckets of width where whole ones fit, of the next
// narrower widths (ten minutes, a minute) where whole ones of them fit
// towards the range's edges, and as scrapes at the edges: a row per
// series, process and bucket, or fewer as g adds them up. width 0 reads
// every scrape.
func (ps *ProfileSeries) recorded(ctx context.Context, ids []uint64, from, to, width int64, g rowGroup) ([]gaugeRow, error) {
	m1, m2 := ceilTo(from, gaugeMinute), floorTo(to, gaugeMinute)
	if width == gaugeScrape || m1 >= m2 {
		return ps.scrapeRows(ctx, ids, from, to, g)
	}
	ctx, err := ps.withRecordsState(ctx)
	if err != nil {
		return nil, err
	}
	var widths []int64 // a minute up to width
	for _, w := range gaugeWidths {
		if w >= gaugeMinute && w <= width {
			widths = append(widths, w)
		}
	}
	out, err := ps.recordedIn(ctx, ids, m1, m2, widths, g)
	if err != nil {
		return nil, err
	}
	for _, edge := range [][2]int64{{from, m1}, {m2, to}} {
		rs, err := ps.scrapeRows(ctx, ids, edge[0], edge[1], g)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// recordedIn reads the records of [from, to), whole buckets of widths[0]
// (ascending widths, each a multiple of the one before): the whole
// buckets of the widest width, and of narrower ones in what that leaves
// at each edge.
func (ps *ProfileSeries) recordedIn(ctx context.Context, ids []uint64, from, to int64, widths []int64, g rowGroup) ([]gaugeRow, error) {
	last := len(widths) - 1
	w := widths[last]
	if last == 0 {
		return ps.gaugeRows(ctx, ids, w, from, to, g)
	}
	a, b := ceilTo(from, w), floorTo(to, w)
	if a >= b {
		return ps.recordedIn(ctx, ids, from, to, widths[:last], g)
	}
	before, err := ps.recordedIn(ctx, ids, from, a, widths[:last], g)
	if err != nil {
		return nil, err
	}
	whole, err := ps.gaugeRows(ctx, ids, w, a, b, g)
	if err != nil {
		return nil, err
	}
	after, err := ps.recordedIn(ctx, ids, b, to, widths[:last], g)
	if err != nil {
		return nil, err
	}
	return append(append(before, whole...), after...), nil
}

// scrapeRows reads the records of the scrapes starting in [from, to) one
// by one, where they are still stored as they came; a minute whose
// scrapes were compacted (its rows of width 0 are gone, or fewer than its
// minute's count) is read as its minute, when the minute starts in the
// range, as decoding reads its merged window. Where the range holds no
// compacted minute, the rows are added up as g says.
func (ps *ProfileSeries) scrapeRows(ctx context.Context, ids []uint64, from, to int64, g rowGroup) ([]gaugeRow, error) {
	if from >= to {
		return nil, nil
	}
	lo, hi := floorTo(from, gaugeMinute), ceilTo(to, gaugeMinute)
	// Where no minute was compacted, the scrapes' rows are the scrapes,
	// added up as g says.
	if compacted, err := ps.compactedIn(ctx, ids, lo, hi); err != nil || !compacted {
		if err != nil {
			return nil, err
		}
		return ps.gaugeRows(ctx, ids, gaugeScrape, from, to, g)
	}
	scrapes, err := ps.gaugeRows(ctx, ids, gaugeScrape, lo, hi, rowGroup{})
	if err != nil {
		return nil, err
	}
	minutes, err := ps.gaugeRows(ctx, ids, gaugeMinute, lo, hi, rowGroup{})
	if err != nil {
		return nil, err
	}
	// A minute's scrapes are read one by one when each has its row.
	type minute struct{ series, start int64 }
	inRows, inMinute := map[minute]int64{}, map[minute]int64{}
	for _, r := range scrapes {
		inRows[minute{r.series, floorTo(r.start, gaugeMinute)}] += r.scrapes
	}
	for _, r := range minutes {
		inMinute[minute{r.series, r.start}] += r.scrapes
	}
	var out []gaugeRow
	for _, r := range scrapes {
		k := minute{r.series, floorTo(r.start, gaugeMinute)}
		// A minute starting before the range: its merged window would
		// not be read either, its scrapes in the range would.
		if r.start >= from && r.start < to && (k.start < from || inRows[k] == inMinute[k]) {
			out = append(out, r)
		}
	}
	for _, r := range minutes {
		k := minute{r.series, r.start}
		if r.start >= from && r.start < to && inRows[k] != inMinute[k] {
			out = append(out, r)
		}
	}
	return out, nil
}

// gaugeWidth is the widest bucket whose sums fall in one step each: one
// that divides step (steps are multiples of step since the epoch, as
// buckets are of their width); 0 (every scrape) when none does.
func gaugeWidth(step time.Duration) int64 {
	for _, w := range []int64{gaugeHour, gaugeTenMinutes, gaugeMinute} {
		if int64(step)%w == 0 {
			return w
		}
	}
	return gaugeScrape
}

// recordedSeries returns the series q chooses, their ids in order, and
// when all of them have their scrapes recorded (recordedFrom).
func (ps *ProfileSeries) recordedSeries(ctx context.Context, q profseries.Query) (map[int64]profseries.Labels, []uint64, int64, error) {
	if err := q.Check(); err != nil {
		return nil, nil, 0, err
	}
	series, err := ps.matchingSeries(ctx, q)
	if err != nil {
		return nil, nil, 0, err
	}
	ids := sortedIDs(series)
	from, err := ps.recordedFrom(ctx, ids)
	return series, ids, from, err
}

// recordedFrom returns the latest recorded_from of the series ids: from
// then, every one of them has its scrapes recorded.
func (ps *ProfileSeries) recordedFrom(ctx context.Context, ids []uint64) (int64, error) {
	var latest int64
	for part := range chunks(ids, 500) {
		q, args := inList(`SELECT MAX(recorded_from) FROM prof_series WHERE id IN `, part)
		var n sql.NullInt64
		if err := ps.b.reader(ctx).QueryRowContext(ctx, ps.b.q(q), args...).Scan(&n); err != nil {
			return 0, fmt.Errorf("read series records: %w", err)
		}
		ps.b.rowsRead.Add(1)
		latest = max(latest, n.Int64)
	}
	return latest, nil
}

// GaugeSeries reads gauge g of the series sel chooses over [from, to), per
// step (see profseries.GaugePoints); no points when nothing is stored. It
// reads the records of the scrapes (a row per series, process and step,
// and per scrape at the range's edges), and decodes blocks only where
// scrapes were stored before migration10, or for a gauge not recorded
// (not the one of its type).
func (ps *ProfileSeries) GaugeSeries(ctx context.Context, g profseries.Gauge, sel profseries.Selector, from, to time.Time, step time.Duration) ([]profseries.GaugePoint, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	groups, err := ps.GaugeSeriesBy(ctx, g, sel, from, to, step, func(profseries.Labels) string { return "" })
	return groups[""], err
}

// fewSeries is the most series of a group GaugeSeriesBy may read a row a
// series and step of, rather than one a step added up by the query.
const fewSeries = 8

// GaugeSeriesBy reads gauge g as GaugeSeries does, of every series sel
// chooses at once, and adds the series up in groups: group names the
// group of a series' labels. A list of many targets is one read a gauge,
// not one per target. A group with nothing stored in the range is absent.
func (ps *ProfileSeries) GaugeSeriesBy(ctx context.Context, g profseries.Gauge, sel profseries.Selector, from, to time.Time, step time.Duration, group func(profseries.Labels) string) (map[string][]profseries.GaugePoint, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	q := profseries.Query{Type: g.Type, Selector: sel, From: from, To: to}
	sums := map[string][]profseries.GaugeSum{}
	addWindows := func(ws []profseries.Window) {
		for _, w := range ws {
			k := group(w.Processes[0].Target)
			sums[k] = append(sums[k], profseries.WindowSums([]profseries.Window{w}, g)...)
		}
	}
	points := func() map[string][]profseries.GaugePoint {
		out := make(map[string][]profseries.GaugePoint, len(sums))
		for k, s := range sums {
			if pts := profseries.GaugePoints(s, g, step); len(pts) > 0 {
				out[k] = pts
			}
		}
		return out
	}
	if kept, ok := profseries.GaugeOf(g.Type); !ok || kept != g {
		ws, err := ps.Windows(ctx, q)
		if err != nil {
			return nil, err
		}
		addWindows(ws)
		return points(), nil
	}
	series, ids, lo, err := ps.recordedSeries(ctx, q)
	if err != nil {
		return nil, err
	}
	if ctx, err = ps.withRecordsState(ctx); err != nil {
		return nil, err
	}
	lo = max(lo, nanos(from))
	if lo > nanos(from) {
		before := q
		before.To = fromNanos(min(lo, nanos(to)))
		ws, err := ps.Windows(ctx, before)
		if err != nil {
			return nil, err
		}
		addWindows(ws)
	}
	if lo < nanos(to) {
		// A group of several series is added up by the query, a row a
		// step; the series alone in their groups are read together, a
		// row a series and step. So are those of many groups of a few
		// series each (a list of targets, each of a version or two),
		// added up here: one read, not one a group.
		keys := make(map[int64]string, len(series))
		members := map[string][]uint64{}
		for _, id := range ids {
			k := group(series[int64(id)])
			keys[int64(id)] = k
			members[k] = append(members[k], id)
		}
		few := 0
		for _, m := range members {
			if len(m) > 1 && len(m) <= fewSeries {
				few++
			}
		}
		together := func(k string) bool {
			n := len(members[k])
			return n == 1 || (n <= fewSeries && few > 1)
		}
		var alone []uint64
		for _, id := range ids {
			if together(keys[int64(id)]) {
				alone = append(alone, id)
			}
		}
		add := func(ids []uint64, g rowGroup, key func(gaugeRow) string) error {
			if len(ids) == 0 {
				return nil
			}
			rows, err := ps.recorded(ctx, ids, lo, nanos(to), gaugeWidth(step), g)
			for _, r := range rows {
				k := key(r)
				sums[k] = append(sums[k], profseries.GaugeSum{Start: fromNanos(r.start), Total: r.total, Duration: time.Duration(r.duration), Scrapes: int(r.gauged)})
			}
			return err
		}
		if err := add(alone, rowGroup{step: int64(step)}, func(r gaugeRow) string { return keys[r.series] }); err != nil {
			return nil, err
		}
		for k, m := range members {
			if together(k) {
				continue
			}
			if err := add(m, rowGroup{step: int64(step), acrossSeries: true}, func(gaugeRow) string { return k }); err != nil {
				return nil, err
			}
		}
	}
	return points(), nil
}

// ProcessSpans lists, per series q chooses and process, the time its
// scrapes starting in [q.From, q.To) span: the first start and the last
// end. It reads the records of the scrapes, a row per series, process and
// hour (and minute and scrape at the range's edges); where scrapes were
// stored before migration10, an aggregate of the blocks' keys (no block
// is decoded). Rollups are not counted (their hours' blocks are).
func (ps *ProfileSeries) ProcessSpans(ctx context.Context, q profseries.Query) ([]profseries.ProcessSpan, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	series, processes, ids, err := ps.seriesOf(ctx, q)
	if err != nil {
		return nil, err
	}
	from, to := nanos(q.From), nanos(q.To)
	lo, err := ps.recordedFrom(ctx, ids)
	if err != nil {
		return nil, err
	}
	lo = max(lo, from)
	type key struct{ series, process int64 }
	spans := map[key]*[2]int64{}
	var order []key
	add := func(series, process, first, last int64) {
		k := key{series, process}
		s := spans[k]
		if s == nil {
			spans[k] = &[2]int64{first, last}
			order = append(order, k)
			return
		}
		s[0], s[1] = min(s[0], first), max(s[1], last)
	}
	if lo > from {
		for part := range chunks(ids, 500) {
			sq, args := inList(`SELECT series_id, process_id, MIN(start_time), MAX(end_time) FROM prof_blocks
				WHERE `+atResolutions+` AND start_time >= ? AND start_time < ? AND series_id IN `, part, from, min(lo, to))
			err := ps.b.each(ctx, sq+` GROUP BY series_id, process_id`, args, func(rows *sql.Rows) error {
				var seriesID, processID, first, last int64
				if err := rows.Scan(&seriesID, &processID, &first, &last); err != nil {
					return err
				}
				add(seriesID, processID, first, last)
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("read profile blocks' processes: %w", err)
			}
		}
	}
	if lo < to {
		rows, err := ps.recorded(ctx, ids, lo, to, gaugeHour, rowGroup{byProcess: true})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			add(r.series, r.process, r.first, r.last)
		}
	}
	slices.SortFunc(order, func(a, b key) int { return cmp.Or(cmp.Compare(a.series, b.series), cmp.Compare(a.process, b.process)) })
	out := make([]profseries.ProcessSpan, 0, len(order))
	for _, k := range order {
		s := spans[k]
		out = append(out, profseries.ProcessSpan{Target: series[k.series], Process: processes[k.process], First: fromNanos(s[0]), Last: fromNanos(s[1])})
	}
	return out, nil
}
