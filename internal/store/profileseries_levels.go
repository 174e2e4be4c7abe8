package store

import (
	"context"
	"errors"
	"slices"
	"time"

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
// starts in the range, which
// the records of the scrapes (prof_gauges) name, looked up by key. It is
// made only where every scrape of the range is recorded and stored as it
// came, with its levels; else every snapshot is read.

// Levels reads the blocks of q as Windows does, each snapshot reduced to
// its levels of sampleType (see profseries.Levels); the windows have no
// request counts. It reads the levels kept beside the blocks where every
// snapshot of the range has them and sampleType is the one kept, else
// it decodes the blocks. every, where not 0, asks for one snapshot per
// that time (see above); the spacing read is returned, 0 where every
// snapshot was.
func (ps *ProfileSeries) Levels(ctx context.Context, q profseries.Query, sampleType string, every time.Duration) ([]profseries.Levels, time.Duration, error) {
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
		ls, err := ps.keptLevels(ctx, q, 0)
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
	return ps.keptLevels(ctx, q, every)
}

// keptLevels reads the levels kept beside the blocks of q, of the first
// snapshot of each bucket of width every where not 0 (see eachBlock).
func (ps *ProfileSeries) keptLevels(ctx context.Context, q profseries.Query, every int64) ([]profseries.Levels, error) {
	var out []profseries.Levels
	err := ps.eachBlock(ctx, q, "levels", false, every, func(_ *blockDecoder, b storedBlock) error {
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
	err := ps.eachBlock(ctx, q, "data", false, 0, func(dec *blockDecoder, b storedBlock) error {
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
