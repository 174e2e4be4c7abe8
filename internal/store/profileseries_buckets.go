package store

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/perfscope/perfscope/internal/profseries"
)

// Merges of buckets: a merge over a range reads whole hours and ten
// minutes (rolled up or not) of its series, and the next merge of a range
// that overlaps it, minutes later, reads most of them again, although a
// live store has changed only its last minutes. The store keeps the merge
// of each whole bucket across the series a read chose, under what the
// records of the bucket's scrapes say of each series (prof_gauges: its
// processes, their counts of scrapes and the times they span): a scrape
// stored into the bucket, however late, changes its records, so a kept
// merge is used only while the bucket holds what it merged. Retention
// forgets the records of the hours it deletes blocks of, and a bucket is
// kept only from where its series' scrapes were all recorded, so a bucket
// with records is whole. The collection epoch is part of the key: a
// collection may give freed stack ids to other stacks.

// bucketsKept bounds the bytes the merges of buckets kept take, about;
// the least recently used go first.
const bucketsKept = 256 << 20

// windowSize is about the bytes w takes in memory.
func windowSize(w profseries.Window) int {
	const sample = 40 + 16 // a Sample, and its values' allocation
	n := 200 + len(w.Samples)*sample
	for _, s := range w.Samples {
		n += 8 * len(s.Values)
	}
	for _, p := range w.Processes {
		n += 100 + len(p.Target.String()) + len(p.Process.BuildID)
	}
	return n
}

// bucketRecords encodes the records rows (prof_gauges, a row per series,
// bucket of width and process) of every bucket of the series ids in
// [from, to), from a multiple of width: a bucket where nothing was
// recorded has an empty record, not none.
func bucketRecords(ids []uint64, width, from, to int64, rows []gaugeRow) map[seriesHour]string {
	byBucket := map[seriesHour][]gaugeRow{}
	for _, r := range rows {
		k := seriesHour{r.series, r.start}
		byBucket[k] = append(byBucket[k], r)
	}
	out := map[seriesHour]string{}
	var b []byte
	for _, id := range ids {
		for h := from; h < to; h += width {
			k := seriesHour{int64(id), h}
			rs := byBucket[k]
			slices.SortFunc(rs, func(x, y gaugeRow) int { return cmp.Compare(x.process, y.process) })
			b = b[:0]
			for _, r := range rs {
				for _, v := range []int64{r.process, r.first, r.last, r.scrapes, r.duration} {
					b = binary.AppendVarint(b, v)
				}
			}
			out[k] = string(b)
		}
	}
	return out
}

// bucketKey names the merge of the bucket [start, start+width) of the
// series ids (ascending) of type typ at the collection epoch, by their
// records; ok is false when a series' records do not vouch for the bucket,
// and empty says that no series has a scrape in it.
func bucketKey(typ string, epoch, width, start int64, ids []uint64, records map[seriesHour]string) (key string, empty, ok bool) {
	h := newKeyHasher()
	h.str(typ)
	for _, v := range []int64{epoch, width, start} {
		h.int(v)
	}
	empty = true
	for _, id := range ids {
		rec, found := records[seriesHour{int64(id), start}]
		if !found {
			return "", false, false
		}
		empty = empty && rec == ""
		h.int(int64(id))
		h.str(rec)
	}
	return h.key(), empty, true
}

// wholeParts returns the pieces of the buckets of c's level that make up
// [from, to), or none where the records do not vouch for every one.
func wholeParts(typ string, epoch, from, to int64, ids []uint64, c *coverage) []piece {
	var parts []piece
	for t := from; t < to; t += c.level.width {
		key, empty, ok := bucketKey(typ, epoch, c.level.width, t, ids, c.records)
		if !ok {
			return nil
		}
		parts = append(parts, piece{from: t, to: t + c.level.width, key: key, empty: empty})
	}
	return parts
}

// joined returns the merge of pc's bucket made of the merges kept of its
// parts, and keeps it; false where a part's is not kept.
func (ps *ProfileSeries) joined(pc piece) (profseries.Window, bool) {
	if len(pc.parts) == 0 {
		return profseries.Window{}, false
	}
	var m profseries.Merger
	for _, part := range pc.parts {
		if part.empty {
			continue
		}
		w, ok := ps.buckets.get(part.key)
		if !ok {
			return profseries.Window{}, false
		}
		if err := m.Add(w); err != nil {
			return profseries.Window{}, false
		}
	}
	if m.Windows() == 0 {
		return profseries.Window{}, false
	}
	w, err := m.Window()
	if err != nil {
		return profseries.Window{}, false
	}
	ps.buckets.put(pc.key, w, windowSize(w)+len(pc.key))
	return w, true
}

// A piece is a part of a span to read: a whole bucket whose merge may be
// kept (key set), or what is around such buckets.
type piece struct {
	from, to int64
	key      string
	empty    bool
	// parts are the whole buckets of the next level the piece's bucket
	// is made of, where their records vouch for every one: their merges
	// kept make the bucket's without a block read (see joined).
	parts []piece
}

// pieces cuts sp, a span of the series of type typ, into the whole
// buckets whose merges may be kept and what is left: a span of rollups
// of several series into its level's buckets (a series' rollup is one
// block a bucket: kept, it would save nothing), a span of blocks into
// the whole buckets of the levels narrower than an hour, the widest
// first (ten minutes, then minutes at its edges: a range starts and ends
// anywhere in its ten minutes). A bucket of a Chained type read alone
// decodes its series' chains from the latest mark before it (see
// profileseries_marks.go).
func (ps *ProfileSeries) pieces(sp span, typ string, epoch int64, levels []coverage) []piece {
	var out []piece
	rest := func(from, to int64) {
		if from >= to {
			return
		}
		if n := len(out); n > 0 && out[n-1].key == "" && out[n-1].to == from {
			out[n-1].to = to
			return
		}
		out = append(out, piece{from: from, to: to})
	}
	// cut cuts [from, to) into the whole buckets of levels[i:] whose
	// records vouch for them, widest first.
	var cut func(from, to int64, levels []coverage)
	cut = func(from, to int64, levels []coverage) {
		if len(levels) == 0 {
			rest(from, to)
			return
		}
		c := &levels[0]
		w := c.level.width
		lo, hi := ceilTo(from, w), floorTo(to, w)
		if lo >= hi {
			cut(from, to, levels[1:])
			return
		}
		cut(from, lo, levels[1:])
		for t := lo; t < hi; t += w {
			key, empty, ok := bucketKey(typ, epoch, w, t, sp.series, c.records)
			if !ok {
				cut(t, t+w, levels[1:])
				continue
			}
			pc := piece{from: t, to: t + w, key: key, empty: empty}
			if len(levels) > 1 {
				pc.parts = wholeParts(typ, epoch, t, t+w, sp.series, &levels[1])
			}
			out = append(out, pc)
		}
		cut(hi, to, levels[1:])
	}
	if sp.res != 0 {
		for _, c := range levels {
			if c.level.resolution() == sp.res && len(sp.series) > 1 {
				cut(sp.from, sp.to, []coverage{c})
				return out
			}
		}
		return []piece{{from: sp.from, to: sp.to}}
	}
	var narrower []coverage
	for _, c := range levels {
		if c.level.width < resolutionHour {
			narrower = append(narrower, c)
		}
	}
	cut(sp.from, sp.to, narrower)
	return out
}
