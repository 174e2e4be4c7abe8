package store

import (
	"errors"
	"math"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Marks of chains. A scrape of a Chained type is coded against the one
// before it in its chain (see chainStart), so a read of a series' blocks
// from a time decodes them from the start of that time's chain: up to
// ten minutes of scrapes a series, decoded only for what is coded
// against them. The ranges pages read start and end minutes after the
// ones read before, and each read decoded again what the one before had.
// A read now leaves marks: the state of each series' chain (the blocks a
// profseries.Chain keeps) at the minute its blocks in the range start
// in, and at the end of the read where that is a whole minute. A later
// read resumes each series from the latest mark at or before where it
// starts, and decodes only what follows it.
//
// A mark is kept under what the records of the series' scrapes
// (prof_gauges, by minute) say of each minute of the chain before it,
// and the collection epoch: a scrape stored into those minutes, however
// late, changes the key, and a mark is made only where the series'
// scrapes were all recorded. The records are read before the blocks, and
// a read of a range's pieces goes on with the chains its last statement
// read: a statement may meet a block stored in between, coded against one
// the mark or the statement before did not hold. Decoding it fails, and
// the read is made again, each chain from its start in the statement
// that reads it (errStaleMark).

// marksKept bounds the bytes the marks kept take, about; the least
// recently used go first.
const marksKept = 64 << 20

// errStaleMark says a series resumed from a mark met a block the mark
// does not account for: the read is to be made again without marks.
var errStaleMark = errors.New("a chain resumed from a mark met a block stored after the mark's records were read")

// chainMarks is what a blockDecoder resumes and marks chains with: the
// records of the minutes of the series it reads (see bucketRecords) from
// vouched, where they are whole, and the collection epoch; known are
// records read before for the same read (not to be changed), records
// those the decoder read.
type chainMarks struct {
	epoch, vouched int64
	known, records map[seriesHour]string
}

// record returns the record of series' minute at t.
func (ms *chainMarks) record(series, t int64) (string, bool) {
	k := seriesHour{series, t}
	if rec, ok := ms.known[k]; ok {
		return rec, true
	}
	rec, ok := ms.records[k]
	return rec, ok
}

// key names the mark of series' chain at m, a whole minute; ok is false
// where the records do not vouch for every minute of the chain before m.
func (ms *chainMarks) key(chainStart, series, m int64) (string, bool) {
	if ms == nil || chainStart < ms.vouched || m <= chainStart {
		return "", false
	}
	h := newKeyHasher()
	for _, v := range []int64{ms.epoch, series, m} {
		h.int(v)
	}
	for t := chainStart; t < m; t += gaugeMinute {
		rec, ok := ms.record(series, t)
		if !ok {
			return "", false
		}
		h.str(rec)
	}
	return h.key(), true
}

// begin readies the chains of the series of froms for a read of each
// one's blocks from the time froms gives, the read ending at to, and
// returns where the read is to start: each series goes on from the latest
// of where the decoder's last read of it ended (when that is in the same
// chain, before its from) and its marks at or before its from, else from
// its chain's start (always, where the decoder is fresh). The blocks
// before that of each series are to be passed over (ignored). The chains are marked at the minute each
// series' from is in, and at the whole minutes of at (ascending) up to
// to, as the read passes them. Without chains, it returns the earliest
// from.
func (d *blockDecoder) begin(froms map[int64]int64, to int64, at []int64) (int64, error) {
	start := int64(math.MaxInt64)
	if !d.chained {
		for _, f := range froms {
			start = min(start, f)
		}
		return start, nil
	}
	if err := d.readMarks(froms, to); err != nil {
		return 0, err
	}
	for s, f := range froms {
		c := d.chainStart(f)
		from, fresh := c, true
		if p, ok := d.pos[s]; ok && !d.fresh && p >= c && p <= f {
			from, fresh = p, false
		}
		for m := floorTo(f, gaugeMinute); m > from; m -= gaugeMinute {
			k, ok := d.marks.key(c, s, m)
			if !ok {
				continue
			}
			if ch, ok := d.ps.marks.get(k); ok {
				d.chains[s], from, fresh = ch.Tail(), m, false
				break
			}
		}
		d.resumed[s] = !fresh
		if fresh {
			d.chains[s] = &profseries.Chain{}
		}
		d.ignore[s] = from
		var marks []int64
		if m := floorTo(f, gaugeMinute); m > from {
			marks = append(marks, m)
		}
		for _, m := range at {
			if m%gaugeMinute == 0 && m > from && m <= to && (len(marks) == 0 || m > marks[len(marks)-1]) {
				marks = append(marks, m)
			}
		}
		d.markAt[s] = marks
		start = min(start, from)
	}
	return start, nil
}

// readMarks reads the records the marks of the chains of froms up to to
// are keyed by, where the decoder resumes and marks chains.
func (d *blockDecoder) readMarks(froms map[int64]int64, to int64) error {
	if d.fresh {
		return nil
	}
	lo, hi := int64(math.MaxInt64), floorTo(to, gaugeMinute)
	ids := make([]uint64, 0, len(froms))
	for s, f := range froms {
		lo = min(lo, d.chainStart(f))
		hi = max(hi, floorTo(f, gaugeMinute))
		ids = append(ids, uint64(s))
	}
	if lo >= hi || d.haveRecords(froms, hi) {
		return nil
	}
	if d.marks == nil {
		epoch, err := d.ps.epoch(d.ctx)
		if err != nil {
			return err
		}
		d.marks = &chainMarks{epoch: epoch, records: map[seriesHour]string{}}
	}
	vouched, err := d.ps.recordedFrom(d.ctx, ids)
	if err != nil {
		return err
	}
	d.marks.vouched = max(d.marks.vouched, ceilTo(vouched, gaugeMinute))
	lo = max(lo, d.marks.vouched)
	if lo >= hi {
		return nil
	}
	rows, err := d.ps.gaugeRows(d.ctx, ids, gaugeMinute, lo, hi, rowGroup{})
	if err != nil {
		return err
	}
	for k, rec := range bucketRecords(ids, gaugeMinute, lo, hi, rows) {
		d.marks.records[k] = rec
	}
	return nil
}

// haveRecords says the decoder has the records of every minute from the
// chain start of each series of froms up to hi, where they are vouched.
func (d *blockDecoder) haveRecords(froms map[int64]int64, hi int64) bool {
	if d.marks == nil {
		return false
	}
	for s, f := range froms {
		for t := max(d.chainStart(f), d.marks.vouched); t < hi; t += gaugeMinute {
			if _, ok := d.marks.record(s, t); !ok {
				return false
			}
		}
	}
	return true
}

// ignored says a block of series starting at start is before where the
// read of the series began (see begin): its chain already holds it.
func (d *blockDecoder) ignored(series, start int64) bool {
	from, ok := d.ignore[series]
	return ok && start < from
}

// passing marks series' chain, before the decoder reads its block that
// starts at start, at the minutes begin asked for that the block is at
// or after.
func (d *blockDecoder) passing(series, start int64) {
	marks := d.markAt[series]
	if len(marks) == 0 || start < marks[0] {
		return
	}
	for len(marks) > 0 && start >= marks[0] {
		d.mark(series, marks[0])
		marks = marks[1:]
	}
	d.markAt[series] = marks
}

// end says the read begun for series ended at to: every block of theirs
// before to has been read. Their chains are marked at the minutes begin
// asked for that no block passed, and at to where it is a whole minute
// inside a chain.
func (d *blockDecoder) end(series []uint64, to int64) {
	if !d.chained {
		return
	}
	for _, id := range series {
		s := int64(id)
		for _, m := range d.markAt[s] {
			d.mark(s, m)
		}
		delete(d.markAt, s)
		if to%gaugeMinute == 0 && d.chainStart(to) != to {
			d.mark(s, to)
		}
		d.pos[s] = to
	}
}

// mark keeps a copy of series' chain as its mark at m, unless kept.
func (d *blockDecoder) mark(series, m int64) {
	ch := d.chains[series]
	if ch == nil {
		return
	}
	k, ok := d.marks.key(d.chainStart(m-1), series, m)
	if !ok {
		return
	}
	if _, kept := d.ps.marks.get(k); kept {
		return
	}
	c := ch.Tail()
	d.ps.marks.put(k, c, c.Size()+len(k))
}
