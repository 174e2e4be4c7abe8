package store

import (
	"context"
	"errors"

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

// Levels reads the blocks of q as Windows does, each snapshot reduced to
// its levels of sampleType (see profseries.Levels); the windows have no
// request counts. It reads the levels kept beside the blocks where every
// snapshot of the range has them and sampleType is the one kept, else
// it decodes the blocks.
func (ps *ProfileSeries) Levels(ctx context.Context, q profseries.Query, sampleType string) ([]profseries.Levels, error) {
	if kept, ok := profseries.LeakSampleType(q.Type); ok && kept == sampleType {
		ls, err := ps.keptLevels(ctx, q)
		if !errors.Is(err, errLevelsMissing) {
			return ls, err
		}
	}
	return ps.decodedLevels(ctx, q, sampleType)
}

// errLevelsMissing says a snapshot of the range has no levels kept.
var errLevelsMissing = errors.New("a snapshot's levels are not kept")

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
