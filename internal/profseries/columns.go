package profseries

// Choosing how each value column of a block is stored. Most modes store a
// column on its own; a sized column stores bytes from the counts of an
// earlier counted column, so a column's best mode depends on which
// columns before it are counted. The choice is made over every set of
// counted columns (Go's profiles have at most four columns; beyond
// maxJointColumns, columns are chosen one by one), by an estimate of the
// compressed size in which a zero byte, what unchanged values and exact
// counts leave, costs a quarter of any other.

// maxJointColumns bounds the columns whose counted sets are all tried.
const maxJointColumns = 6

// cost estimates the compressed size of b.
func cost(b []byte) int {
	c := 0
	for _, x := range b {
		if x == 0 {
			c++
		} else {
			c += 4
		}
	}
	return c
}

// counted is the counts of a column stored counted: of its values, or
// (delta) of their differences from the earlier block's.
type counted struct {
	ks    []int64
	delta bool
}

// columns writes the value columns of samples. sms are the samplings of
// sized samples (nil if none); preds, for a block coded against an
// earlier one, each column's values of the earlier block's sample paired
// with each sample (0 where none), which the delta modes store against.
func (w *writer) columns(samples []Sample, k int, sms []sampling, preds [][]int64) {
	// alone[j] is column j's best mode that needs no other column,
	// countedW[j] its counted mode (nil where there is none).
	alone := make([]writer, k)
	countedW := make([]writer, k)
	counts := make([]counted, k)
	for j := range k {
		var p []int64
		if preds != nil {
			p = preds[j]
		}
		alone[j] = aloneColumn(samples, j, p)
		if sms != nil && alone[j].b[0] != modeZero && alone[j].b[0] != modeScaled {
			countedW[j], counts[j] = countedColumn(samples, j, sms, p)
		}
	}
	if sms == nil {
		for j := range k {
			w.b = append(w.b, alone[j].b...)
		}
		return
	}
	// sized returns column j stored from column b's counts.
	sized := func(j, b int) writer {
		mode := byte(modeSized)
		if counts[b].delta {
			mode = modeSizedDelta
		}
		c := writer{b: []byte{mode}}
		c.uvarint(uint64(b))
		rests := make([]int64, len(samples))
		for i, s := range samples {
			rests[i] = s.Values[j] - sms[i].bytes(counts[b].ks[i])
			if counts[b].delta {
				rests[i] -= preds[j][i]
			}
		}
		c.ints(rests, counts[b].delta)
		return c
	}
	// choose returns the columns' writers when the columns in set are
	// counted, and their cost.
	choose := func(set uint) ([]writer, int) {
		out := make([]writer, k)
		total := 0
		for j := range k {
			if set&(1<<j) != 0 {
				out[j] = countedW[j]
			} else {
				out[j] = alone[j]
				for b := range j {
					if set&(1<<b) == 0 {
						continue
					}
					if c := sized(j, b); cost(c.b) < cost(out[j].b) {
						out[j] = c
					}
				}
			}
			total += cost(out[j].b)
		}
		return out, total
	}
	var best []writer
	bestCost := -1
	if k <= maxJointColumns {
		for set := range uint(1) << k {
			ok := true
			for j := range k {
				if set&(1<<j) != 0 && countedW[j].b == nil {
					ok = false
				}
			}
			if !ok {
				continue
			}
			if ws, c := choose(set); bestCost < 0 || c < bestCost {
				best, bestCost = ws, c
			}
		}
	} else {
		best, _ = choose(0)
	}
	for _, c := range best {
		w.b = append(w.b, c.b...)
	}
}

// aloneColumn returns column j in the mode that needs no other column
// and costs least, the simplest on a tie.
func aloneColumn(samples []Sample, j int, preds []int64) writer {
	mode, scale := columnMode(samples, j)
	switch mode {
	case modeZero:
		return writer{b: []byte{modeZero}}
	case modeScaled:
		w := writer{b: []byte{modeScaled}}
		w.varint(scale)
		return w
	}
	best := writer{b: []byte{modeVarints}}
	for _, s := range samples {
		best.varint(s.Values[j])
	}
	if preds != nil {
		c := writer{b: []byte{modeVarintsDelta}}
		diffs := make([]int64, len(samples))
		for i, s := range samples {
			diffs[i] = s.Values[j] - preds[i]
		}
		c.seq(diffs)
		if cost(c.b) < cost(best.b) {
			best = c
		}
	}
	return best
}

// countedColumn returns column j stored counted, against preds where
// that costs less, and its counts.
func countedColumn(samples []Sample, j int, sms []sampling, preds []int64) (writer, counted) {
	write := func(mode byte, pred func(i int) int64) (writer, []int64) {
		ks, rests := make([]int64, len(samples)), make([]int64, len(samples))
		for i, s := range samples {
			ks[i] = sms[i].count(s.Values[j] - pred(i))
			rests[i] = s.Values[j] - pred(i) - sms[i].objects(ks[i])
		}
		c := writer{b: []byte{mode}}
		c.ints(ks, mode == modeCountedDelta)
		c.ints(rests, mode == modeCountedDelta)
		return c, ks
	}
	best, ks := write(modeCounted, func(int) int64 { return 0 })
	n := counted{ks: ks}
	if preds != nil {
		c, ks := write(modeCountedDelta, func(i int) int64 { return preds[i] })
		if cost(c.b) < cost(best.b) {
			best, n = c, counted{ks: ks, delta: true}
		}
	}
	return best, n
}

// ints writes vs as a seq, or as zigzag varints where seq is false (the
// modes of blocks coded alone, as first stored).
func (w *writer) ints(vs []int64, seq bool) {
	if seq {
		w.seq(vs)
		return
	}
	for _, v := range vs {
		w.varint(v)
	}
}

// seq writes vs as the modes of blocks coded against another store them:
// a byte 0 then a zigzag varint each, or, where that costs less (most
// differences from the block before are 0), a byte 1, a bitmap of the
// values that are not 0, and a zigzag varint each of those.
func (w *writer) seq(vs []int64) {
	dense := writer{b: []byte{0}}
	for _, v := range vs {
		dense.varint(v)
	}
	sparse := writer{b: make([]byte, 1+(len(vs)+7)/8)}
	sparse.b[0] = 1
	for i, v := range vs {
		if v != 0 {
			sparse.b[1+i/8] |= 1 << (i % 8)
			sparse.varint(v)
		}
	}
	if cost(sparse.b) < cost(dense.b) {
		w.b = append(w.b, sparse.b...)
		return
	}
	w.b = append(w.b, dense.b...)
}

// seq reads len(out) values seq wrote into out.
func (r *reader) seq(out []int64) {
	switch r.byte() {
	case 0:
		for i := range out {
			out[i] = r.varint()
		}
	case 1:
		n := (len(out) + 7) / 8
		if n > len(r.b) {
			r.fail()
			return
		}
		bitmap := r.b[:n]
		r.b = r.b[n:]
		for i := range out {
			out[i] = 0
			if bitmap[i/8]&(1<<(i%8)) != 0 {
				out[i] = r.varint()
			}
		}
	default:
		r.fail()
	}
}
