package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Levels of snapshots (migration12): as a snapshot of a type leaks are
// judged on is stored, Append keeps beside its block its levels
// (profseries.EncodeLevels), the few bytes judging leaks reads of it. A
// read of levels then reads no block, and no block before its range
// that a block in it is coded against. Compaction, rollups and deletion
// remove a snapshot's levels with its block; the windows they make are
// not snapshots, and have none. A block stored before migration12 has
// none either: a read whose range holds one decodes the blocks, as
// before.
//
// A read may also ask for one snapshot per minute, ten minutes or hour
// (a long range holds more snapshots than a trend compares): the first
// snapshot of each series and process in each bucket of that width that
// starts in the range, whose shape and levels the records of the scrapes
// (prof_gauges) keep in the bucket's row (migration17): one range of rows
// a series, no block read. It is made only where every scrape of the
// range is recorded and stored as it came, with its levels; else every
// snapshot is read.

// Levels reads the blocks of q as Windows does, each snapshot reduced to
// its levels of sampleType (see profseries.Levels); the windows have no
// request counts. It reads the levels kept beside the blocks where every
// snapshot of the range has them and sampleType is the one kept, else
// it decodes the blocks. every, where not 0, asks for one snapshot per
// that time (see above); the spacing read is returned, 0 where every
// snapshot was. The levels are in order of time in each series.
func (ps *ProfileSeries) Levels(ctx context.Context, q profseries.Query, sampleType string, every time.Duration) ([]profseries.Levels, time.Duration, error) {
	ctx, done := ps.b.view(ctx)
	defer done()
	if kept, ok := profseries.LeakSampleType(q.Type); ok && kept == sampleType {
		if w := int64(every); slices.Contains([]int64{gaugeMinute, gaugeTenMinutes, gaugeHour}, w) {
			ls, err := ps.spacedLevels(ctx, q, w)
			if err == nil {
				return ls, every, nil
			}
			if !errors.Is(err, errLevelsMissing) {
				return nil, 0, err
			}
		}
		ls, err := ps.keptLevels(ctx, q)
		if !errors.Is(err, errLevelsMissing) {
			return ls, 0, err
		}
	}
	ls, err := ps.decodedLevels(ctx, q, sampleType)
	return ls, 0, err
}

// errLevelsMissing says a snapshot of the range has no levels kept.
var errLevelsMissing = errors.New("a snapshot's levels are not kept")

// spacedLevels reads the levels of the first snapshot of each bucket of
// width every (see the comment at the top), or errLevelsMissing where the
// range has scrapes not recorded, windows compaction made, or a snapshot
// without levels.
func (ps *ProfileSeries) spacedLevels(ctx context.Context, q profseries.Query, every int64) ([]profseries.Levels, error) {
	_, ids, recordedFrom, err := ps.recordedSeries(ctx, q)
	if err != nil {
		return nil, err
	}
	from, to := nanos(q.From), nanos(q.To)
	if recordedFrom > from {
		return nil, errLevelsMissing
	}
	if compacted, err := ps.compactedIn(ctx, ids, from, to); err != nil || compacted {
		if err != nil {
			return nil, err
		}
		return nil, errLevelsMissing
	}
	return ps.bucketLevels(ctx, q, every)
}

// bucketLevels reads the levels prof_gauges keeps of the first snapshot
// of each series and process in each bucket of width every that starts
// in q's range, series by series and in order of time in each, or
// errLevelsMissing where a bucket has none.
func (ps *ProfileSeries) bucketLevels(ctx context.Context, q profseries.Query, every int64) ([]profseries.Levels, error) {
	series, processes, ids, err := ps.seriesOf(ctx, q)
	if err != nil {
		return nil, err
	}
	ctx, err = ps.withRecordsState(ctx)
	if err != nil {
		return nil, err
	}
	from, to := ceilTo(nanos(q.From), every), nanos(q.To)
	// One snapshot a bucket of each series, as most have one process
	// over the range: the levels are not copied again as they grow.
	out := make([]profseries.Levels, 0, len(ids)*int(min((to-from)/every+1, 10_000)))
	for part := range chunks(ids, 500) {
		rows, err := ps.levelRows(ctx, part, every, from, to)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.levels == nil || r.shape < 0 {
				return nil, errLevelsMissing
			}
			shape, err := ps.shape(ctx, r.shape)
			if err != nil {
				return nil, err
			}
			t := fromNanos(r.start)
			l := profseries.Levels{Window: profseries.Window{Start: t, End: t, Shape: shape,
				Processes: []profseries.TargetProcess{{Target: series[r.series], Process: processes[r.process]}}}}
			if err := profseries.DecodeLevels(r.levels, &l); err != nil {
				return nil, err
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// A levelRow is what prof_gauges keeps of the first snapshot of a series
// and process in the bucket starting at bucket: its start, shape (-1:
// none) and levels.
type levelRow struct {
	series, bucket, process, start, shape int64
	levels                                []byte
}

// levelRowsKept bounds the bytes of the level rows kept (see levelRows).
const levelRowsKept = 64 << 20

// levelSegment is how many buckets of levels are read, and kept, at once.
const levelSegment = 10

// levelRows reads the level rows of the series ids (at most a chunk) in
// the buckets of width every starting in [from, to) whose first snapshot
// starts before to, ordered by series, start and process. The range is
// read in segments of levelSegment buckets: a segment closed (see
// recordsState.closed) is read whole once and kept under the records'
// revision (a range of the last hour, read again ten seconds later,
// reads only its last segments); the others are read as the range has
// them.
func (ps *ProfileSeries) levelRows(ctx context.Context, ids []uint64, every, from, to int64) ([]levelRow, error) {
	st, known := ctx.Value(stateKey{}).(recordsState)
	seg := levelSegment * every
	var out []levelRow
	for s := floorTo(from, seg); s < to; s += seg {
		a, b := max(s, from), min(s+seg, to)
		if !known || !st.closed(every, s+seg) {
			rows, err := ps.readLevelRows(ctx, ids, every, a, b, to)
			if err != nil {
				return nil, err
			}
			out = append(out, rows...)
			continue
		}
		h := newKeyHasher()
		h.str("levels")
		for _, v := range []int64{st.rev, every, s, int64(len(ids))} {
			h.int(v)
		}
		for _, id := range ids {
			h.int(int64(id))
		}
		key := h.key()
		rows, ok := ps.levels.get(key)
		if !ok {
			var err error
			if rows, err = ps.readLevelRows(ctx, ids, every, s, s+seg, s+seg); err != nil {
				return nil, err
			}
			size := 64
			for _, r := range rows {
				size += int(unsafe.Sizeof(r)) + len(r.levels)
			}
			ps.levels.put(key, rows, size)
		}
		for _, r := range rows {
			if r.bucket >= a && r.bucket < b && r.start < to {
				out = append(out, r)
			}
		}
	}
	slices.SortStableFunc(out, func(x, y levelRow) int {
		return cmp.Or(cmp.Compare(x.series, y.series), cmp.Compare(x.bucket, y.bucket), cmp.Compare(x.process, y.process))
	})
	return out, nil
}

// readLevelRows reads the level rows of the series ids in the buckets of
// width every starting in [from, to) whose first snapshot starts before
// before.
func (ps *ProfileSeries) readLevelRows(ctx context.Context, ids []uint64, every, from, to, before int64) ([]levelRow, error) {
	var out []levelRow
	sq, args := inList(`SELECT series_id, start_time, process_id, first_start, first_shape, first_levels FROM prof_gauges
		WHERE width = ? AND start_time >= ? AND start_time < ? AND first_start < ? AND series_id IN `,
		ids, every, from, to, before)
	err := ps.b.each(ctx, sq, args, func(rows *sql.Rows) error {
		var r levelRow
		var shape sql.NullInt64
		if err := rows.Scan(&r.series, &r.bucket, &r.process, &r.start, &shape, &r.levels); err != nil {
			return err
		}
		r.shape = -1
		if shape.Valid {
			r.shape = shape.Int64
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the levels of snapshots: %w", err)
	}
	return out, nil
}

// keptLevels reads the levels kept beside the blocks of q.
func (ps *ProfileSeries) keptLevels(ctx context.Context, q profseries.Query) ([]profseries.Levels, error) {
	var out []profseries.Levels
	err := ps.eachBlock(ctx, q, "levels", false, func(_ *blockDecoder, b storedBlock) error {
		l := profseries.Levels{Window: b.w}
		if b.w.End.Equal(b.w.Start) {
			if b.data == nil {
				return errLevelsMissing
			}
			if err := profseries.DecodeLevels(b.data, &l); err != nil {
				return err
			}
		}
		out = append(out, l)
		return nil
	})
	return out, err
}

// decodedLevels reads the levels of the blocks of q from their decoded
// columns.
func (ps *ProfileSeries) decodedLevels(ctx context.Context, q profseries.Query, sampleType string) ([]profseries.Levels, error) {
	var out []profseries.Levels
	err := ps.eachBlock(ctx, q, "data", false, func(dec *blockDecoder, b storedBlock) error {
		l := profseries.Levels{Window: b.w}
		if !b.w.End.Equal(b.w.Start) {
			// Not judged: read only for the blocks after it.
			out = append(out, l)
			return dec.skip(b.series, b.resolution, nanos(b.w.Start), b.data)
		}
		if err := dec.levels(b.series, b.resolution, nanos(b.w.Start), b.data, &l, sampleType); err != nil {
			return err
		}
		out = append(out, l)
		return nil
	})
	return out, err
}
