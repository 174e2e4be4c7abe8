package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"
	"unsafe"
)

// Records of closed ranges are kept (migration20). The pages over many
// targets read the records of the same buckets (prof_gauges) again and
// again: a day's hours for the charts, the spans of the findings and the
// coverage of the merges, request after request. The rows of a range no
// scrape in order can reach any more only change when a scrape is stored
// late, or when retention deletes them; so the store says when that
// happens, and a reader keeps what it read of such a range until it
// does.
//
// prof_meta keeps two values for it:
//   - newest_start, the latest start of a scrape stored (never later than
//     the clock of the process storing it, so that one scrape stamped far
//     ahead does not make every later one late);
//   - records_rev, bumped by every transaction that stores a scrape
//     starting more than lateSlack before newest_start, and by every one
//     that deletes records of buckets (forgetBefore). Compaction deletes
//     the records of single scrapes only, and those are never kept.
//
// A range whose buckets all end at or before newest_start - lateSlack,
// as read before its rows, is closed: a scrape stored into it later
// starts before that, so it is late, and it bumps records_rev. What was
// read of a closed range is kept under the records_rev read before it,
// and is used while records_rev stays the same. A write that commits
// between the two reads at worst keeps rows under a revision already
// gone, never rows a revision that is current leaves out.

// lateSlack is how far behind the newest scrape a scrape may start and
// still be in order: a scrape starts a window before it is stored (10 s
// by default), and Appends from several targets come in a few seconds
// apart. A scrape whose window is longer than that counts as late:
// correct, but each one makes every reader read its records again.
const lateSlack = int64(2 * time.Minute)

// keptRowsLimit bounds the records kept, in bytes.
const keptRowsLimit = 16 << 20

// recordsState is what a reader reads before the records it may keep.
type recordsState struct{ newest, rev int64 }

// recordsState reads newest_start and records_rev (one statement).
func (ps *ProfileSeries) recordsState(ctx context.Context) (recordsState, error) {
	var st recordsState
	if err := ps.b.reader(ctx).QueryRowContext(ctx, `SELECT (SELECT value FROM prof_meta WHERE name = 'newest_start'), (SELECT value FROM prof_meta WHERE name = 'records_rev')`).Scan(&st.newest, &st.rev); err != nil {
		return st, fmt.Errorf("read records state: %w", err)
	}
	ps.b.rowsRead.Add(1)
	return st, nil
}

// stateKey keys the records state an operation of many reads read once
// (see withRecordsState).
type stateKey struct{}

// withRecordsState returns ctx with the records state read, for every
// read under it to judge by: an operation that reads the records of many
// ranges (a chart of many groups, the coverage of a merge) reads it once.
// A write that commits during the operation is then seen by its next
// one, as a write during one read is.
func (ps *ProfileSeries) withRecordsState(ctx context.Context) (context.Context, error) {
	if _, ok := ctx.Value(stateKey{}).(recordsState); ok {
		return ctx, nil
	}
	st, err := ps.recordsState(ctx)
	if err != nil {
		return nil, err
	}
	return context.WithValue(ctx, stateKey{}, st), nil
}

// closed says whether no scrape in order can reach a bucket of width
// starting before to.
func (st recordsState) closed(width, to int64) bool {
	return ceilTo(to, max(width, 1)) <= st.newest-lateSlack
}

// noteStored moves newest_start on to the latest of starts (the scrapes
// an Append transaction stored, no later than now) and bumps records_rev
// when any of them is late; in that transaction, after its rows. Updating
// newest_start first takes its row's lock (PostgreSQL) before it is read
// back, so two transactions storing at once judge lateness in turn.
func (ps *ProfileSeries) noteStored(ctx context.Context, tx *sql.Tx, starts []int64, now int64) error {
	if len(starts) == 0 {
		return nil
	}
	newest := min(slices.Max(starts), now)
	if _, err := tx.ExecContext(ctx, ps.b.q(`UPDATE prof_meta SET value = CASE WHEN value < ? THEN ? ELSE value END WHERE name = 'newest_start'`), newest, newest); err != nil {
		return fmt.Errorf("note newest scrape: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT value FROM prof_meta WHERE name = 'newest_start'`).Scan(&newest); err != nil {
		return fmt.Errorf("note newest scrape: %w", err)
	}
	if slices.Min(starts) < newest-lateSlack {
		return ps.changedRecords(ctx, tx)
	}
	return nil
}

// changedRecords bumps records_rev, in the transaction that changes
// records before newest_start - lateSlack.
func (ps *ProfileSeries) changedRecords(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `UPDATE prof_meta SET value = value + 1 WHERE name = 'records_rev'`); err != nil {
		return fmt.Errorf("note changed records: %w", err)
	}
	return nil
}

// keptRows returns the rows gaugeRows(ids, width, from, to, g) read
// before, while the range is closed and its records unchanged; else it
// reads them, and keeps them where the range is closed. The rows
// of a group (g) may then come in two, one of each part of the range, as
// they do from recorded: the callers add them up. Ranges of single
// scrapes are not kept: they are the edges of ranges ending at any time,
// read once. The rows returned are shared: nothing may change them (they
// are clipped, so an append copies them).
func (ps *ProfileSeries) keptRows(ctx context.Context, ids []uint64, width, from, to int64, g rowGroup) ([]gaugeRow, error) {
	if width < gaugeMinute {
		return ps.readGaugeRows(ctx, ids, width, from, to, g)
	}
	st, ok := ctx.Value(stateKey{}).(recordsState)
	if !ok {
		var err error
		if st, err = ps.recordsState(ctx); err != nil {
			return nil, err
		}
	}
	if !st.closed(width, to) {
		// A range of buckets of ten minutes or more ending now (a
		// chart's, a sparkline's) is read in two: up to the last bucket
		// closed, kept, and the one or two after, read.
		c := floorTo(st.newest-lateSlack, width)
		if width < gaugeTenMinutes || c <= from {
			return ps.readGaugeRows(ctx, ids, width, from, to, g)
		}
		kept, err := ps.keptRows(ctx, ids, width, from, c, g)
		if err != nil {
			return nil, err
		}
		open, err := ps.readGaugeRows(ctx, ids, width, c, to, g)
		if err != nil {
			return nil, err
		}
		return slices.Clip(append(slices.Clip(kept), open...)), nil
	}
	h := newKeyHasher()
	for _, v := range []int64{st.rev, width, from, to, g.step, int64(len(ids))} {
		h.int(v)
	}
	if g.byProcess {
		h.int(1)
	} else {
		h.int(0)
	}
	if g.acrossSeries {
		h.int(1)
	} else {
		h.int(0)
	}
	for _, id := range ids {
		h.int(int64(id))
	}
	key := h.key()
	if rows, ok := ps.rows.get(key); ok {
		return rows, nil
	}
	rows, err := ps.readGaugeRows(ctx, ids, width, from, to, g)
	if err != nil {
		return nil, err
	}
	rows = slices.Clip(rows)
	ps.rows.put(key, rows, len(rows)*int(unsafe.Sizeof(gaugeRow{}))+64)
	return rows, nil
}
