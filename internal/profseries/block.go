package profseries

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// A block is one scrape's samples in the form they are stored: columnar,
// then compressed with zstd. Its layout, before compression:
//
//	samples, columns            uvarint
//	stack ids                   uvarint deltas, ascending (duplicates are 0)
//	sizes                       a byte: 0, none; 1, the period (zigzag),
//	                            then one uvarint per sample
//	per value column: a mode byte, then
//	  modeVarints  one zigzag varint per sample
//	  modeZero     nothing: every value is 0
//	  modeScaled   one zigzag varint c: every value is c times column 0's
//	  modeCounted  per sample a zigzag count k, then per sample a zigzag
//	               rest r: the value is objects(k), plus r
//	  modeSized    a column b before this one, stored counted, then per
//	               sample a zigzag rest r: the value is bytes(k) for
//	               column b's count k, plus r
//
// Sorting by stack id makes the deltas small (ids are dense), and the
// scaled mode stores a CPU profile's nanoseconds, which are its sample
// counts times the period, in one varint.
//
// Sizes are the allocation sizes of heap and allocs samples (see
// Sample.Size). The Go runtime reports a sample of size B taken n times
// at rate R as n·s objects and n·B·s bytes, truncated, where
// s = 1/(1-exp(-B/R)): so both are known from a small count n, up to a
// small rest. objects(k) and bytes(k) are k·s and k·B·s truncated, with
// s to the first three terms of its series, R/B + 1/2 + B/12R, in
// integer arithmetic (see sampling): a value never depends on how a
// machine computes exp, and the rests make every value exact whatever
// the runtime did.
//
// The first byte of a stored block says how the rest is stored:
// blockRaw or blockZstd (the layout above without the sizes byte and the
// last two modes, as first stored), blockRaw2 or blockZstd2 (the layout
// above); raw where zstd would make a tiny block larger.
const (
	blockRaw   = 0
	blockZstd  = 1
	blockRaw2  = 2
	blockZstd2 = 3

	modeVarints = 0
	modeZero    = 1
	modeScaled  = 2
	modeCounted = 3
	modeSized   = 4
	// Modes of blocks coded against an earlier block (see EncodeAgainst).
	modeVarintsDelta = 5
	modeCountedDelta = 6
	modeSizedDelta   = 7
)

// MaxBlockSamples bounds the samples one block may hold, so that a
// corrupt or hostile block cannot make a decoder allocate without limit.
const MaxBlockSamples = 1 << 22

// maxColumns bounds the sample types of a block; Go's profiles have at
// most four.
const maxColumns = 16

// A Codec encodes and decodes blocks. It holds a zstd encoder and decoder;
// it is safe for concurrent use.
type Codec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

// NewCodec returns a codec.
func NewCodec() *Codec {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err) // only for invalid options, which these are not
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(64<<20))
	if err != nil {
		panic(err)
	}
	return &Codec{enc: enc, dec: dec}
}

// Encode encodes samples, each with columns values, as a block; period is
// the profile's (for heap and allocs profiles, the sampling rate the
// units of sizes come from; 0 where there is none). The samples are
// sorted by stack in place (stably), which is the order Decode returns
// them in.
func (c *Codec) Encode(samples []Sample, columns int, period int64) ([]byte, error) {
	return c.encode(samples, columns, period, blockRaw2)
}

// EncodeAside encodes samples as Encode does, as a block that no later
// block is coded against (see EncodeAgainst): a Chain decodes it without
// keeping it, so a scrape stored late, between two blocks of which the
// later is coded against the earlier, does not push the earlier out.
func (c *Codec) EncodeAside(samples []Sample, columns int, period int64) ([]byte, error) {
	return c.encode(samples, columns, period, blockRawAside)
}

// encode encodes samples alone as a block of format raw (raw, or the
// next format, compressed).
func (c *Codec) encode(samples []Sample, columns int, period int64, raw byte) ([]byte, error) {
	if len(samples) > MaxBlockSamples || columns > maxColumns {
		return nil, fmt.Errorf("encode block: %d samples of %d values, at most %d of %d", len(samples), columns, MaxBlockSamples, maxColumns)
	}
	slices.SortStableFunc(samples, func(a, b Sample) int { return cmp.Compare(a.Stack, b.Stack) })
	var w writer
	w.uvarint(uint64(len(samples)))
	w.uvarint(uint64(columns))
	var prev uint64
	sized := false
	for _, s := range samples {
		if len(s.Values) != columns {
			return nil, fmt.Errorf("encode block: a sample has %d values, want %d", len(s.Values), columns)
		}
		w.uvarint(s.Stack - prev)
		prev = s.Stack
		sized = sized || s.Size != 0
	}
	if sized {
		w.b = append(w.b, 1)
		w.varint(period)
		for _, s := range samples {
			w.uvarint(s.Size)
		}
	} else {
		w.b = append(w.b, 0)
	}
	var sms []sampling
	if sized {
		sms = make([]sampling, len(samples))
		for i, s := range samples {
			sms[i] = samplingOf(s.Size, period)
		}
	}
	w.columns(samples, columns, sms, nil)
	z := c.enc.EncodeAll(w.b, make([]byte, 1, len(w.b)/2+16))
	if len(z) < len(w.b)+1 {
		z[0] = raw + 1
		return z, nil
	}
	return append([]byte{raw}, w.b...), nil
}

// sampling is the scale s of samples of one size at one rate as a
// fraction num/den (see the block layout); den 0 where there is none (no
// size, no rate, or one out of the range the fraction is exact in): then
// objects(k) is k and bytes(k) is 0.
type sampling struct {
	num, den, size uint64
}

func samplingOf(size uint64, period int64) sampling {
	if size == 0 || period <= 1 || period >= 1<<28 || size >= uint64(period) {
		return sampling{}
	}
	r, b := uint64(period), size
	return sampling{num: 12*r*r + 6*r*b + b*b, den: 12 * r * b, size: b}
}

// objects is k·s truncated toward zero; bytes is k·B·s.
func (sm sampling) objects(k int64) int64 {
	if sm.den == 0 {
		return k
	}
	return sm.times(k, sm.num)
}

func (sm sampling) bytes(k int64) int64 {
	if sm.den == 0 {
		return 0
	}
	return sm.times(k, sm.num*sm.size)
}

// times is k·num/den truncated toward zero, 0 where it would overflow
// (the rest then carries the value).
func (sm sampling) times(k int64, num uint64) int64 {
	m := uint64(k)
	if k < 0 {
		m = -m
	}
	hi, lo := bits.Mul64(m, num)
	if hi >= sm.den {
		return 0
	}
	q, _ := bits.Div64(hi, lo, sm.den)
	if q > math.MaxInt64 {
		return 0
	}
	if k < 0 {
		return -int64(q)
	}
	return int64(q)
}

// count is the k whose objects(k) is nearest v.
func (sm sampling) count(v int64) int64 {
	if sm.den == 0 {
		return v
	}
	k := int64(math.Round(float64(v) * float64(sm.den) / float64(sm.num)))
	best, rest := k, absDiff(v, sm.objects(k))
	for _, c := range []int64{k - 1, k + 1} {
		if d := absDiff(v, sm.objects(c)); d < rest {
			best, rest = c, d
		}
	}
	return best
}

func absDiff(a, b int64) uint64 {
	if a > b {
		return uint64(a) - uint64(b)
	}
	return uint64(b) - uint64(a)
}

// columnMode says whether column j is all zero or column 0's times a
// constant, which take no bytes per sample.
func columnMode(samples []Sample, j int) (mode byte, scale int64) {
	zero, scaled, found := true, j > 0, false
	for _, s := range samples {
		v, base := s.Values[j], s.Values[0]
		if v != 0 {
			zero = false
		}
		switch {
		case !scaled:
		case base == 0:
			scaled = v == 0
		case !found && v%base != 0:
			scaled = false
		case !found:
			scale, found = v/base, true
		default:
			scaled = v == base*scale
		}
	}
	switch {
	case zero:
		return modeZero, 0
	case scaled && found:
		return modeScaled, scale
	}
	return modeVarints, 0
}

// Decode decodes a block Encode made. A block EncodeAgainst coded
// against an earlier one is decoded by a Chain.
func (c *Codec) Decode(block []byte) ([]Sample, error) {
	var d columns
	if err := c.decode(block, &d, nil); err != nil {
		return nil, err
	}
	return d.samples(), nil
}

// samples returns d's samples, in new memory.
func (d *columns) samples() []Sample {
	samples := make([]Sample, d.n)
	values := make([]int64, d.n*d.columns)
	for i := range samples {
		vs := values[i*d.columns : (i+1)*d.columns : (i+1)*d.columns]
		for j := range vs {
			vs[j] = d.values[j][i]
		}
		samples[i] = Sample{Stack: d.stacks[i], Values: vs, Size: d.sizes[i]}
	}
	return samples
}

// columns is one block decoded as it is laid out, column by column, in
// buffers that the next block decoded into it reuses: what merging many
// blocks reads without allocating per block.
type columns struct {
	body       []byte
	n, columns int
	stacks     []uint64
	sizes      []uint64
	values     [][]int64 // per column, n each
	counts     [][]int64 // per column, the counts of a counted column
	counted    []byte    // per column, the counted mode it was stored in, else 0
	sms        []sampling
	match      []int // for a block coded against another, the pairing
}

// grow makes d's buffers hold n samples of k columns.
func (d *columns) grow(n, k int) {
	d.n, d.columns = n, k
	d.stacks = resize(d.stacks, n)
	d.sizes = resize(d.sizes, n)
	d.sms = resize(d.sms, n)
	for len(d.values) < k {
		d.values = append(d.values, nil)
		d.counts = append(d.counts, nil)
	}
	d.counted = resize(d.counted, k)
	for j := range k {
		d.values[j] = resize(d.values[j], n)
		d.counted[j] = 0
	}
}

// clone copies what a block decoded against d reads of it: its
// samples' stacks, sizes, sampling and values (the buffers of decoding
// are not copied).
func (d *columns) clone() columns {
	c := columns{n: d.n, columns: d.columns,
		stacks: slices.Clone(d.stacks[:d.n]), sizes: slices.Clone(d.sizes[:d.n]), sms: slices.Clone(d.sms[:d.n]),
		counted: slices.Clone(d.counted[:d.columns])}
	c.values, c.counts = make([][]int64, d.columns), make([][]int64, d.columns)
	for j := range d.columns {
		c.values[j] = slices.Clone(d.values[j][:d.n])
		if d.counted[j] != 0 {
			c.counts[j] = slices.Clone(d.counts[j][:d.n])
		}
	}
	return c
}

// size is about the bytes clone keeps of d.
func (d *columns) size() int {
	const perSample = 8 + 8 + 24 // stack, size, sampling
	n := 100 + d.n*perSample
	for j := range d.columns {
		n += 8 * d.n
		if d.counted[j] != 0 {
			n += 8 * d.n
		}
	}
	return n
}

// resize returns s with length n, its contents undefined.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// decode decodes block into d, reusing d's buffers; base is the block
// it is coded against, nil for one coded alone (see EncodeAgainst).
func (c *Codec) decode(block []byte, d *columns, base *columns) error {
	h, err := readHeader(block)
	if err != nil {
		return err
	}
	if h.against != (base != nil) {
		return fmt.Errorf("decode block: %w (coded against a block: %v, given one: %v)", errCorrupt, h.against, base != nil)
	}
	body := h.body
	if h.zstd {
		if d.body, err = c.dec.DecodeAll(body, d.body[:0]); err != nil {
			return fmt.Errorf("decode block: %w", err)
		}
		body = d.body
	}
	r := reader{b: body}
	if base != nil {
		return d.readAgainst(&r, base)
	}
	n, k := r.count(), r.count()
	if n > MaxBlockSamples || k > maxColumns {
		return fmt.Errorf("decode block: %w (%d samples of %d values)", errCorrupt, n, k)
	}
	d.grow(n, k)
	var id uint64
	for i := range n {
		id += r.uvarint()
		d.stacks[i] = id
		d.sizes[i] = 0
		d.sms[i] = sampling{}
	}
	sized := false
	if h.format != blockRaw && h.format != blockZstd {
		sized = d.readSizes(&r, nil)
	}
	for j := range k {
		d.column(&r, j, sized, nil)
	}
	if err := r.done("block"); err != nil {
		return fmt.Errorf("decode %w", err)
	}
	return nil
}

// readSizes reads the sizes byte and the sizes it says are stored into
// d's first d.n samples; match, for a block coded against base, says
// which samples take their size from the base's. It says whether the
// samples are sized.
func (d *columns) readSizes(r *reader, m *against) bool {
	switch r.byte() {
	case 0:
		return false
	case 1:
		period := r.varint()
		for i := range d.n {
			if m != nil && m.match[i] >= 0 {
				d.sizes[i] = m.base.sizes[m.match[i]]
			} else {
				d.sizes[i] = r.uvarint()
			}
			d.sms[i] = samplingOf(d.sizes[i], period)
		}
		return true
	}
	r.fail()
	return false
}

// column reads column j of d in the mode its byte says; m, for a block
// coded against base, gives the modes that predict from it.
func (d *columns) column(r *reader, j int, sized bool, m *against) {
	n, col := d.n, d.values[j]
	switch mode := r.byte(); {
	case mode == modeZero:
		clear(col)
	case mode == modeScaled:
		scale := r.varint()
		for i, v := range d.values[0][:n] {
			col[i] = v * scale
		}
	case mode == modeVarints:
		for i := range col {
			col[i] = r.varint()
		}
	case mode == modeVarintsDelta && m != nil:
		r.seq(col)
		for i := range col {
			col[i] += m.value(i, j)
		}
	case mode == modeCounted && sized:
		ks := resize(d.counts[j], n)
		for i := range ks {
			ks[i] = r.varint()
		}
		for i := range col {
			col[i] = d.sms[i].objects(ks[i]) + r.varint()
		}
		d.counts[j], d.counted[j] = ks, mode
	case mode == modeCountedDelta && m != nil && sized:
		ks := resize(d.counts[j], n)
		r.seq(ks)
		r.seq(col)
		for i := range col {
			col[i] += d.sms[i].objects(ks[i]) + m.value(i, j)
		}
		d.counts[j], d.counted[j] = ks, mode
	case mode == modeSized && sized:
		b := r.uvarint()
		if b >= uint64(j) || d.counted[b] != modeCounted {
			r.fail()
			break
		}
		for i := range col {
			col[i] = d.sms[i].bytes(d.counts[b][i]) + r.varint()
		}
	case mode == modeSizedDelta && m != nil && sized:
		b := r.uvarint()
		if b >= uint64(j) || d.counted[b] != modeCountedDelta {
			r.fail()
			break
		}
		r.seq(col)
		for i := range col {
			col[i] += d.sms[i].bytes(d.counts[b][i]) + m.value(i, j)
		}
	default:
		r.fail()
	}
}
