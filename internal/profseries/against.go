package profseries

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
)

// A block coded against an earlier block of the same series stores what
// changed since: a heap or goroutine snapshot repeats the last one's
// stacks, its allocation counts grow by a few samples a scrape and its
// in-use counts barely move, so its rows cost next to nothing. Its
// stored form:
//
//	format      blockRawAgainst or blockZstdAgainst
//	sum         8 bytes: a hash of the earlier block's stacks, sizes and
//	            values, which names it to a Chain, so that a decoder never
//	            decodes a block against any other
//	then, raw or compressed with zstd:
//	samples, columns, earlier samples   uvarint
//	stacks      a byte: 0, as in a block coded alone; 1, against the
//	            earlier block: the count of runs, the runs' lengths over
//	            its samples, kept then dropped in turn, then the new
//	            stacks as ascending uvarint deltas
//	sizes       as in a block coded alone, but only of the samples the
//	            earlier block does not have (the others are its sizes)
//	columns     the modes of a block coded alone, and
//	  modeVarintsDelta  per sample a zigzag varint: the value minus the
//	                    earlier block's value of the same stack (0 if none)
//	  modeCountedDelta  as modeCounted, but each count is stored minus
//	                    the count predicted from the earlier value (see
//	                    predictCount)
//
// Samples are paired with the earlier block's by stack, the i-th sample
// of a stack with its i-th there. A block is coded against another only
// where that is smaller; a store that codes blocks so must read each
// series in order of time through a Chain, from a block coded alone.
const (
	blockRawAgainst  = 4
	blockZstdAgainst = 5
	blockRawAside    = 6
	blockZstdAside   = 7
)

// header is what the first bytes of a stored block say.
type header struct {
	format  byte
	zstd    bool
	against bool   // coded against an earlier block
	aside   bool   // coded alone, and nothing against it
	sum     uint64 // the earlier block's sum
	body    []byte
}

func readHeader(block []byte) (header, error) {
	if len(block) == 0 {
		return header{}, fmt.Errorf("decode block: %w (empty)", errCorrupt)
	}
	h := header{format: block[0], body: block[1:]}
	switch h.format {
	case blockRaw, blockRaw2:
	case blockZstd, blockZstd2:
		h.zstd = true
	case blockRawAside, blockZstdAside:
		h.zstd, h.aside = h.format == blockZstdAside, true
	case blockRawAgainst, blockZstdAgainst:
		h.zstd, h.against = h.format == blockZstdAgainst, true
		if len(h.body) < 8 {
			return h, fmt.Errorf("decode block: %w (short header)", errCorrupt)
		}
		h.sum, h.body = binary.LittleEndian.Uint64(h.body), h.body[8:]
	default:
		return h, fmt.Errorf("decode block: %w (format %d)", errCorrupt, h.format)
	}
	return h, nil
}

// EncodeAgainst encodes samples as Encode does, or against base, the
// samples of an earlier block of the same series as Decode returned them
// (sorted by stack): whichever is smaller. A decoder then needs that
// block, decoded shortly before by the same Chain.
func (c *Codec) EncodeAgainst(samples []Sample, columns int, period int64, base []Sample) ([]byte, error) {
	alone, err := c.Encode(samples, columns, period)
	if err != nil || len(base) == 0 {
		return alone, err
	}
	if !slices.IsSortedFunc(base, func(a, b Sample) int { return cmp.Compare(a.Stack, b.Stack) }) {
		return alone, nil
	}
	baseStacks := make([]uint64, len(base))
	for i, s := range base {
		if len(s.Values) != columns {
			return alone, nil
		}
		baseStacks[i] = s.Stack
	}
	stacks := make([]uint64, len(samples))
	for i, s := range samples {
		stacks[i] = s.Stack
	}
	match := pair(stacks, baseStacks, nil)
	sized := false
	for i, s := range samples {
		if k := match[i]; k >= 0 && base[k].Size != s.Size {
			return alone, nil // sizes are the stack's: not the same series
		}
		sized = sized || s.Size != 0
	}
	var w writer
	w.uvarint(uint64(len(samples)))
	w.uvarint(uint64(columns))
	w.uvarint(uint64(len(base)))
	w.stacksAgainst(stacks, match, len(base))
	var sms []sampling
	if sized {
		w.b = append(w.b, 1)
		w.varint(period)
		sms = make([]sampling, len(samples))
		for i, s := range samples {
			sms[i] = samplingOf(s.Size, period)
			if match[i] < 0 {
				w.uvarint(s.Size)
			}
		}
	} else {
		w.b = append(w.b, 0)
	}
	preds := make([][]int64, columns)
	for j := range preds {
		preds[j] = make([]int64, len(samples))
		for i, k := range match {
			if k >= 0 {
				preds[j][i] = base[k].Values[j]
			}
		}
	}
	w.columns(samples, columns, sms, preds)
	head := []byte{blockZstdAgainst}
	head = binary.LittleEndian.AppendUint64(head, sumOfSamples(base, columns))
	out := c.enc.EncodeAll(w.b, head)
	if len(out)-len(head) >= len(w.b) {
		out = append(append(head[:0:0], head...), w.b...)
		out[0] = blockRawAgainst
	}
	if len(out) >= len(alone) {
		return alone, nil
	}
	return out, nil
}

// stacksAgainst writes the stacks of a block coded against an earlier
// one, each either as in a block alone or as runs over the earlier
// block's, whichever is shorter.
func (w *writer) stacksAgainst(stacks []uint64, match []int, baseLen int) {
	alone := writer{b: []byte{0}}
	var prev uint64
	for _, id := range stacks {
		alone.uvarint(id - prev)
		prev = id
	}
	kept := make([]bool, baseLen)
	for _, k := range match {
		if k >= 0 {
			kept[k] = true
		}
	}
	var runs []uint64
	keep, n := true, uint64(0)
	for _, k := range kept {
		if k != keep {
			runs, keep, n = append(runs, n), k, 0
		}
		n++
	}
	runs = append(runs, n)
	runsW := writer{b: []byte{1}}
	runsW.uvarint(uint64(len(runs)))
	for _, r := range runs {
		runsW.uvarint(r)
	}
	prev = 0
	for i, id := range stacks {
		if match[i] < 0 {
			runsW.uvarint(id - prev)
			prev = id
		}
	}
	if len(runsW.b) < len(alone.b) {
		w.b = append(w.b, runsW.b...)
		return
	}
	w.b = append(w.b, alone.b...)
}

// pair returns, for each of stacks (ascending), the index of the sample
// of base (ascending) it is paired with, or -1: the i-th of a stack with
// the i-th of the same stack. match is reused.
func pair(stacks, base []uint64, match []int) []int {
	match = resize(match, len(stacks))
	k := 0
	for i, id := range stacks {
		for k < len(base) && base[k] < id {
			k++
		}
		match[i] = -1
		if k < len(base) && base[k] == id {
			match[i] = k
			k++
		}
	}
	return match
}

// sum hashes d's samples (their stacks, sizes and values): what a block
// coded against another checks it was given. It is FNV-1a over the
// samples' count, the columns', then each sample's stack, size and
// values as varints; a chained read sums every block it decodes, so the
// varints are written into a buffer on the stack and hashed a few
// kilobytes at a time.
func (d *columns) sum() uint64 {
	h := fnv.New64a()
	var buf [4096 + (2+maxColumns)*binary.MaxVarintLen64]byte
	b := buf[:0]
	b = binary.AppendUvarint(b, uint64(d.n))
	b = binary.AppendUvarint(b, uint64(d.columns))
	values := d.values[:d.columns]
	for i, stack := range d.stacks[:d.n] {
		b = binary.AppendUvarint(b, stack)
		b = binary.AppendUvarint(b, d.sizes[i])
		for _, col := range values {
			b = binary.AppendVarint(b, col[i])
		}
		if len(b) > 4096 {
			h.Write(b)
			b = b[:0]
		}
	}
	h.Write(b)
	return h.Sum64()
}

// sumOfSamples is the sum of samples, each of k values, laid out as a
// decoded block.
func sumOfSamples(samples []Sample, k int) uint64 {
	var d columns
	d.grow(len(samples), k)
	for i, s := range samples {
		d.stacks[i], d.sizes[i] = s.Stack, s.Size
		for j := range k {
			d.values[j][i] = s.Values[j]
		}
	}
	return d.sum()
}

// against is the earlier block a block is decoded against, and the
// pairing of the block's samples with its.
type against struct {
	base  *columns
	match []int
}

// value is column j's value of the earlier block's sample paired with
// sample i, 0 if none.
func (m *against) value(i, j int) int64 {
	if k := m.match[i]; k >= 0 {
		return m.base.values[j][k]
	}
	return 0
}

// readAgainst reads the body of a block coded against base into d.
func (d *columns) readAgainst(r *reader, base *columns) error {
	n, k, baseN := r.uvarint(), r.uvarint(), r.uvarint()
	// A sample is the earlier block's or new, and a new one takes a byte.
	if r.err != nil || baseN != uint64(base.n) || k != uint64(base.columns) || n > baseN+uint64(len(r.b)) || n > MaxBlockSamples {
		return fmt.Errorf("decode block: %w (%d samples of %d values against %d)", errCorrupt, n, k, baseN)
	}
	d.grow(int(n), int(k))
	switch r.byte() {
	case 0:
		var id uint64
		for i := range d.n {
			id += r.uvarint()
			d.stacks[i] = id
		}
	case 1:
		d.readRuns(r, base)
	default:
		r.fail()
	}
	if r.err != nil {
		return fmt.Errorf("decode block: %w", r.err)
	}
	m := &against{base: base, match: pair(d.stacks[:d.n], base.stacks[:base.n], d.match)}
	d.match = m.match
	for i := range d.n {
		d.sizes[i] = 0
		d.sms[i] = sampling{}
	}
	sized := d.readSizes(r, m)
	for j := range d.columns {
		d.column(r, j, sized, m)
	}
	if err := r.done("block"); err != nil {
		return fmt.Errorf("decode %w", err)
	}
	return nil
}

// readRuns reads stacks stored as runs over base's and new ones, into
// d.stacks in ascending order (a kept stack before a new one of the same
// id, as pair pairs them).
func (d *columns) readRuns(r *reader, base *columns) {
	runs := r.count()
	kept := d.match[:0]
	i, keep := 0, true
	for range runs {
		n := r.uvarint()
		if n > uint64(base.n-i) {
			r.fail()
			return
		}
		for range n {
			if keep {
				kept = append(kept, i)
			}
			i++
		}
		keep = !keep
	}
	if i != base.n || len(kept) > d.n {
		r.fail()
		return
	}
	d.match = kept
	added := d.n - len(kept)
	out, a, prev := 0, 0, uint64(0)
	next := func() uint64 { prev += r.uvarint(); return prev }
	var pending uint64
	havePending := false
	for out < d.n {
		if !havePending && a < added {
			pending, havePending = next(), true
			a++
		}
		switch {
		case len(kept) > 0 && (!havePending || base.stacks[kept[0]] <= pending):
			d.stacks[out] = base.stacks[kept[0]]
			kept = kept[1:]
		case havePending:
			if out > 0 && pending < d.stacks[out-1] {
				r.fail()
				return
			}
			d.stacks[out], havePending = pending, false
		default:
			r.fail()
			return
		}
		out++
	}
}

// A Chain decodes the blocks of one series in order of time, keeping the
// last few it decoded, which a block coded against an earlier one (see
// EncodeAgainst) is decoded from. The zero Chain is ready to use.
type Chain struct {
	slots [chainSlots]chainSlot
	next  int
	aside columns // the last block coded aside
}

// chainSlots is how many decoded blocks a Chain keeps: a block is coded
// against the one before it (blocks coded aside do not count), and a few
// more let a writer that restarted store a scrape between two others.
const chainSlots = 4

type chainSlot struct {
	used   bool
	sum    uint64 // d.sum(), once summed
	summed bool
	d      columns
}

// decode decodes block into one of ch's slots.
func (ch *Chain) decode(c *Codec, block []byte) (*columns, error) {
	h, err := readHeader(block)
	if err != nil {
		return nil, err
	}
	var base *chainSlot
	if h.against {
		for i := range ch.slots {
			s := &ch.slots[i]
			if !s.used {
				continue
			}
			if !s.summed {
				s.sum, s.summed = s.d.sum(), true
			}
			if s.sum == h.sum {
				base = s
			}
		}
		if base == nil {
			return nil, fmt.Errorf("decode block: %w (it is coded against a block not read shortly before it)", errCorrupt)
		}
	}
	if h.aside {
		if err := c.decode(block, &ch.aside, nil); err != nil {
			return nil, err
		}
		return &ch.aside, nil
	}
	slot := &ch.slots[ch.next]
	if slot == base {
		ch.next = (ch.next + 1) % chainSlots
		slot = &ch.slots[ch.next]
	}
	ch.next = (ch.next + 1) % chainSlots
	slot.used = false
	var b *columns
	if base != nil {
		b = &base.d
	}
	if err := c.decode(block, &slot.d, b); err != nil {
		return nil, err
	}
	slot.used, slot.summed = true, false
	return &slot.d, nil
}

// Tail returns a Chain holding a copy of the block ch decoded last
// (blocks coded aside do not count), without changing ch: what decodes
// the blocks after those ch read where each is coded against the one
// before it, as a writer that keeps running codes them. A block coded
// against an earlier one (a writer restarted within the chain) does not
// decode from it, and says so: what a reader keeps to resume a series'
// chain later (see the store's chain marks), a quarter of what ch holds.
func (ch *Chain) Tail() *Chain {
	last := (ch.next + chainSlots - 1) % chainSlots
	c := &Chain{next: ch.next}
	if s := ch.slots[last]; s.used {
		c.slots[last] = chainSlot{used: true, sum: s.sum, summed: s.summed, d: s.d.clone()}
	}
	return c
}

// Size is about the bytes ch takes in memory.
func (ch *Chain) Size() int {
	n := 200
	for _, s := range ch.slots {
		if s.used {
			n += s.d.size()
		}
	}
	return n
}

// Decode decodes block, the next block of ch's series in order of time.
func (ch *Chain) Decode(c *Codec, block []byte) ([]Sample, error) {
	d, err := ch.decode(c, block)
	if err != nil {
		return nil, err
	}
	return d.samples(), nil
}

// Read decodes block, the next block of ch's series in order of time,
// only so that later blocks can be decoded against it.
func (ch *Chain) Read(c *Codec, block []byte) error {
	_, err := ch.decode(c, block)
	return err
}

// AddChained adds the samples of block, decoded by ch (see Chain.Decode),
// whose window is w (without samples).
func (m *Merger) AddChained(c *Codec, ch *Chain, w Window, block []byte) error {
	d, err := ch.decode(c, block)
	if err != nil {
		return err
	}
	return m.addColumns(w, d)
}

// Chained says whether a store codes the blocks of profile type typ
// against the series' previous block (see EncodeAgainst), and so reads
// them through a Chain from a block coded alone: heap and goroutine
// snapshots, which repeat the last one, and allocs, whose stacks do. CPU,
// mutex and block scrapes gain nothing measurable from it
// (bench/scrape/README.md), and their reads stay as they were.
func Chained(typ string) bool {
	return typ == Heap || typ == Goroutine || typ == Allocs
}
