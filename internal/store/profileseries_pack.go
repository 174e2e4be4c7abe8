package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Packs. Once an hour of a series is past, retention moves the blocks it
// holds at a resolution into one pack (profseries.Pack), a row of
// prof_packs keyed by the series, the resolution and the hour, and leaves
// in each block's data a reference to its entry: compressed together, an
// hour of small blocks takes about half what they take apart
// (bench/scrape/README.md). Scrapes as they came are packed once their
// hour ended packDelay ago, one-minute windows once compaction made their
// hour; ten-minute windows are not (six an hour, and few hours). Every
// other column of a block stays, so the queries choose blocks as before;
// only decoding reads the pack (packReader). Packing is one transaction a
// series and resolution: a reader sees the blocks either whole or as
// references with their pack. A pack goes when no block of its hour can
// refer to it any more: raw scrapes are compacted and deleted by whole
// hours, windows by the hours they cover.

// packDelay is how long after its end an hour of scrapes is packed: long
// enough for the scrapes that started in it to be stored (a scrape stored
// later is kept as it came, beside the pack).
const packDelay = 10 * time.Minute

// pack moves the blocks of series at resolution in the hours before
// limit, after the last hour packed, into packs; it returns the blocks
// packed.
func (ps *ProfileSeries) pack(ctx context.Context, series, resolution, limit int64) (int, error) {
	// packedTo is where the hours not packed yet begin.
	packedTo := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) (int64, error) {
		var last sql.NullInt64
		if err := q.QueryRowContext(ctx, ps.b.q(`SELECT MAX(start_time) FROM prof_packs WHERE series_id = ? AND resolution = ?`), series, resolution).Scan(&last); err != nil {
			return 0, fmt.Errorf("pack: %w", err)
		}
		if !last.Valid {
			return 0, nil
		}
		return last.Int64 + packSpan, nil
	}
	// A look without the lock first: most passes find nothing to pack.
	from, err := packedTo(ps.b.db)
	if err != nil {
		return 0, err
	}
	var waiting int
	if err := ps.b.reader(ctx).QueryRowContext(ctx, ps.b.q(`SELECT COUNT(*) FROM prof_blocks WHERE series_id = ? AND resolution = ? AND start_time >= ? AND start_time < ?`),
		series, resolution, from, limit).Scan(&waiting); err != nil {
		return 0, fmt.Errorf("pack: %w", err)
	}
	if waiting < 2 {
		return 0, nil
	}
	tx, err := ps.exclusiveTx(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	// Another process may have packed in between.
	if from, err = packedTo(tx); err != nil {
		return 0, err
	}
	type block struct {
		start, process, shape int64
		data                  []byte
	}
	var hours [][]block
	rows, err := tx.QueryContext(ctx, ps.b.q(`SELECT start_time, process_id, shape_id, data FROM prof_blocks
		WHERE series_id = ? AND resolution = ? AND start_time >= ? AND start_time < ? ORDER BY start_time, process_id, shape_id`), series, resolution, from, limit)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var b block
		if err := rows.Scan(&b.start, &b.process, &b.shape, &b.data); err != nil {
			rows.Close()
			return 0, err
		}
		if n := len(hours); n == 0 || floorTo(hours[n-1][0].start, packSpan) != floorTo(b.start, packSpan) {
			hours = append(hours, nil)
		}
		hours[len(hours)-1] = append(hours[len(hours)-1], b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n := 0
	for _, hour := range hours {
		if len(hour) < 2 {
			continue // a pack of one block saves nothing
		}
		blocks := make([][]byte, len(hour))
		packed := false
		for i, b := range hour {
			blocks[i] = b.data
			_, isRef, _ := profseries.PackedEntry(b.data)
			packed = packed || isRef
		}
		if packed {
			continue // references already: never packed twice
		}
		pack, refs, err := ps.codec().Pack(blocks)
		if err != nil {
			return 0, fmt.Errorf("pack series %d at %d: %w", series, hour[0].start, err)
		}
		h := floorTo(hour[0].start, packSpan)
		if _, err := tx.ExecContext(ctx, ps.b.q(`INSERT INTO prof_packs (series_id, resolution, start_time, data) VALUES (?, ?, ?, ?)`), series, resolution, h, pack); err != nil {
			return 0, err
		}
		for i, b := range hour {
			if _, err := tx.ExecContext(ctx, ps.b.q(`UPDATE prof_blocks SET data = ? WHERE series_id = ? AND resolution = ? AND start_time = ? AND process_id = ? AND shape_id = ?`),
				refs[i], series, resolution, b.start, b.process, b.shape); err != nil {
				return 0, err
			}
		}
		n += len(hour)
	}
	if n == 0 {
		return 0, nil
	}
	if err := ps.summarize(ctx, tx, series); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// A packReader reads the packs of the blocks one read meets, each pack
// once: a read goes through each series in order of time, so it keeps
// one pack a series, the last it read. Packs unpacked are also kept for
// the reads after (ps.packs): the ranges read one after another, on a
// live store, start in the same past hours (a day ago, an hour ago),
// whose packs each read would otherwise unpack again. A pack never
// changes (an hour is packed once, and its pack goes only with its
// blocks); a kept one is used only at the collection epoch it was read
// at all the same, which every pass of retention that compacts or
// deletes moves on.
type packReader struct {
	ctx   context.Context
	ps    *ProfileSeries
	packs map[[2]int64]readPack // by series and resolution
	// epoch is the collection epoch, once read (see unpack).
	epoch     int64
	epochRead bool
}

type readPack struct {
	hour   int64
	blocks [][]byte
}

// packKey names a pack as kept: its series, resolution and hour, and
// the collection epoch it was read at.
type packKey struct{ series, resolution, hour, epoch int64 }

// packsKept bounds the bytes of the packs kept unpacked, about (an hour
// of a target's CPU scrapes is about 250 KB unpacked, of its heap 140 KB,
// of its goroutines 10 KB); the least recently used go first.
const packsKept = 128 << 20

// errPackGone is what a read meets when retention removed an hour while
// it read it.
var errPackGone = errors.New("the hour was compacted or deleted while it was read: ask again")

// block returns the block data stands for: data itself, or the block of
// a pack it refers to (series' blocks at resolution of the hour start is
// in).
func (r *packReader) block(series, resolution, start int64, data []byte) ([]byte, error) {
	entry, packed, err := profseries.PackedEntry(data)
	if err != nil || !packed {
		return data, err
	}
	hour := floorTo(start, packSpan)
	p, ok := r.packs[[2]int64{series, resolution}]
	blocks := p.blocks
	if !ok || p.hour != hour {
		if !r.epochRead {
			// Read before the pack: a pass of retention in between
			// makes the pack kept under an epoch already past.
			if r.epoch, err = r.ps.epoch(r.ctx); err != nil {
				return nil, err
			}
			r.epochRead = true
		}
		blocks, err = r.unpack(packKey{series, resolution, hour, r.epoch})
		if err != nil {
			return nil, err
		}
		if r.packs == nil {
			r.packs = map[[2]int64]readPack{}
		}
		r.packs[[2]int64{series, resolution}] = readPack{hour, blocks}
	}
	if entry >= len(blocks) {
		return nil, fmt.Errorf("read series %d at %s: a block refers to entry %d of a pack of %d", series, fromNanos(hour).UTC().Format(time.RFC3339), entry, len(blocks))
	}
	return blocks[entry], nil
}

// unpack returns the blocks of pack k, kept or read and unpacked.
func (r *packReader) unpack(k packKey) ([][]byte, error) {
	if blocks, ok := r.ps.packs.get(k); ok {
		return blocks, nil
	}
	series, resolution, hour := k.series, k.resolution, k.hour
	// The store's connection, not a transaction's: a read of packs
	// may happen while the transaction's rows are open, and packs are
	// only ever read committed.
	var pack []byte
	err := r.ps.b.reader(r.ctx).QueryRowContext(r.ctx, r.ps.b.q(`SELECT data FROM prof_packs WHERE series_id = ? AND resolution = ? AND start_time = ?`),
		series, resolution, hour).Scan(&pack)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read series %d at %s: %w", series, fromNanos(hour).UTC().Format(time.RFC3339), errPackGone)
	}
	if err != nil {
		return nil, fmt.Errorf("read pack: %w", err)
	}
	r.ps.b.rowsRead.Add(1)
	blocks, err := r.ps.codec().Unpack(pack)
	if err != nil {
		return nil, fmt.Errorf("read series %d at %s: %w", series, fromNanos(hour).UTC().Format(time.RFC3339), err)
	}
	size := 100
	for _, b := range blocks {
		size += 24 + len(b)
	}
	r.ps.packs.put(k, blocks, size)
	return blocks, nil
}
