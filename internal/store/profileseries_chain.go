package store

import (
	"context"
	"fmt"

	"github.com/perfscope/perfscope/internal/profseries"
)

// A blockDecoder decodes stored blocks as a read meets them, each series
// in order of time: the scrapes of a Chained type through a Chain per
// series, since they may be coded against the block before (see base),
// and every other block alone. A block moved into a pack (see
// profileseries_pack.go) is read from its pack, which the decoder reads
// once per read.
type blockDecoder struct {
	c       *profseries.Codec
	chained bool
	// chainStart is where the chain of a block starting at a time starts.
	chainStart func(int64) int64
	chains     map[int64]*profseries.Chain
	packs      *packReader

	// What resumes and marks chains (see profileseries_marks.go), for
	// the reads that begin and end: per series, where its last read
	// ended (pos), the blocks to pass over before (ignore), the minutes
	// to mark its chain at (markAt), and whether its chain was resumed
	// from a mark or an earlier read's statement; marks are the records
	// they are keyed by, and fresh says to read every chain from its
	// start in the statement that reads it.
	ctx         context.Context
	ps          *ProfileSeries
	pos, ignore map[int64]int64
	markAt      map[int64][]int64
	resumed     map[int64]bool
	marks       *chainMarks
	fresh       bool
}

func (ps *ProfileSeries) decoder(ctx context.Context, typ string) *blockDecoder {
	return &blockDecoder{c: ps.codec(), chained: profseries.Chained(typ), chains: map[int64]*profseries.Chain{},
		packs: &packReader{ctx: ctx, ps: ps}, chainStart: ps.chainStart,
		ctx: ctx, ps: ps, pos: map[int64]int64{}, ignore: map[int64]int64{}, markAt: map[int64][]int64{}, resumed: map[int64]bool{}}
}

// stale makes err, met decoding a block of series, an errStaleMark where
// the series' chain was resumed (see begin): from a mark, or from what
// an earlier statement read, which a block stored since may be coded
// against.
func (d *blockDecoder) stale(series int64, err error) error {
	if err != nil && d.resumed[series] {
		return fmt.Errorf("%w (%v)", errStaleMark, err)
	}
	return err
}

func (d *blockDecoder) chain(series, resolution int64) *profseries.Chain {
	if !d.chained || resolution != 0 {
		return nil
	}
	ch := d.chains[series]
	if ch == nil {
		ch = &profseries.Chain{}
		d.chains[series] = ch
	}
	return ch
}

// samples decodes a block of series at resolution that starts at start.
func (d *blockDecoder) samples(series, resolution, start int64, data []byte) ([]profseries.Sample, error) {
	data, err := d.packs.block(series, resolution, start, data)
	if err != nil {
		return nil, err
	}
	if ch := d.chain(series, resolution); ch != nil {
		d.passing(series, start)
		samples, err := ch.Decode(d.c, data)
		return samples, d.stale(series, err)
	}
	return d.c.Decode(data)
}

// levels decodes a block of series at resolution that starts at start
// into l's levels of sampleType.
func (d *blockDecoder) levels(series, resolution, start int64, data []byte, l *profseries.Levels, sampleType string) error {
	data, err := d.packs.block(series, resolution, start, data)
	if err != nil {
		return err
	}
	if ch := d.chain(series, resolution); ch != nil {
		d.passing(series, start)
		return d.stale(series, ch.Levels(d.c, data, l, sampleType))
	}
	return d.c.Levels(data, l, sampleType)
}

// add adds a block of series at resolution, whose window is w, to m.
func (d *blockDecoder) add(m *profseries.Merger, series, resolution int64, w profseries.Window, data []byte) error {
	data, err := d.packs.block(series, resolution, nanos(w.Start), data)
	if err != nil {
		return err
	}
	if ch := d.chain(series, resolution); ch != nil {
		d.passing(series, nanos(w.Start))
		return d.stale(series, m.AddChained(d.c, ch, w, data))
	}
	return m.AddBlock(d.c, w, data)
}

// skip decodes a block read only so that the blocks after it in its
// series can be: one before the range asked, from the start of its span.
func (d *blockDecoder) skip(series, resolution, start int64, data []byte) error {
	if ch := d.chain(series, resolution); ch != nil {
		data, err := d.packs.block(series, resolution, start, data)
		if err != nil {
			return err
		}
		d.passing(series, start)
		return d.stale(series, ch.Read(d.c, data))
	}
	return nil
}

// readFrom is where a read of blocks from from starts: the start of its
// span for a Chained type, so that the blocks coded against earlier ones
// find them.
func (d *blockDecoder) readFrom(from int64) int64 {
	if !d.chained {
		return from
	}
	return d.chainStart(from)
}
