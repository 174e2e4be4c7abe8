package profseries

import (
	"cmp"
	"fmt"
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
//	               rest r: the value is k times the unit of the sample's
//	               size (unitOf), plus r
//	  modeSized    a column b before this one, then per sample a zigzag
//	               rest r: the value is column b's times the size, plus r
//
// Sorting by stack id makes the deltas small (ids are dense), and the
// scaled mode stores a CPU profile's nanoseconds, which are its sample
// counts times the period, in one varint.
//
// Sizes are the allocation sizes of heap and allocs samples (see
// Sample.Size). The Go runtime reports a sample of size B taken n times
// at rate R as n·s objects and n·B·s bytes, truncated, where
// s = 1/(1-exp(-B/R)): so objects are a small count n times a unit per
// size, and bytes are objects times the size, each up to a small rest.
// Units are computed in integers, so a value never depends on how a
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
	for j := range columns {
		w.column(samples, j, sized, period)
	}
	z := c.enc.EncodeAll(w.b, make([]byte, 1, len(w.b)/2+16))
	if len(z) < len(w.b)+1 {
		z[0] = blockZstd2
		return z, nil
	}
	return append([]byte{blockRaw2}, w.b...), nil
}

// unitOf is the unit of objects of samples of size bytes at a sampling
// rate of period bytes: s = 1/(1-exp(-B/R)) (see the block layout) is
// R/B + 1/2 + B/12R + ..., and its integer part, to the first two terms,
// is (2R+B)/2B, which is integer arithmetic every machine does alike. 1
// where there is no size, no rate, or the unit would be 1 anyway.
func unitOf(size uint64, period int64) int64 {
	if size == 0 || period <= 1 || size >= uint64(period) || period > 1<<40 {
		return 1
	}
	return (2*period + int64(size)) / (2 * int64(size))
}

// column writes column j in the mode that takes the fewest bytes before
// compression, the simplest on a tie.
func (w *writer) column(samples []Sample, j int, sized bool, period int64) {
	mode, scale := columnMode(samples, j)
	switch mode {
	case modeZero:
		w.b = append(w.b, modeZero)
		return
	case modeScaled:
		w.b = append(w.b, modeScaled)
		w.varint(scale)
		return
	}
	best := writer{b: []byte{modeVarints}}
	for _, s := range samples {
		best.varint(s.Values[j])
	}
	if sized {
		var c writer
		c.b = append(c.b, modeCounted)
		rests := make([]int64, len(samples))
		for i, s := range samples {
			u := unitOf(s.Size, period)
			k := roundDiv(s.Values[j], u)
			c.varint(k)
			rests[i] = s.Values[j] - k*u
		}
		for _, r := range rests {
			c.varint(r)
		}
		if len(c.b) < len(best.b) {
			best = c
		}
		for b := range j {
			var c writer
			c.b = append(c.b, modeSized)
			c.uvarint(uint64(b))
			for _, s := range samples {
				c.varint(s.Values[j] - s.Values[b]*int64(s.Size))
			}
			if len(c.b) < len(best.b) {
				best = c
			}
		}
	}
	w.b = append(w.b, best.b...)
}

// roundDiv is v/u rounded to the nearest integer, so that the rest of a
// value a little under a multiple of u is small and negative rather than
// nearly u.
func roundDiv(v, u int64) int64 {
	k := v / u
	if r := v - k*u; 2*r > u {
		k++
	} else if 2*r < -u {
		k--
	}
	return k
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

// Decode decodes a block Encode made.
func (c *Codec) Decode(block []byte) ([]Sample, error) {
	if len(block) == 0 {
		return nil, fmt.Errorf("decode block: %w (empty)", errCorrupt)
	}
	body := block[1:]
	switch block[0] {
	case blockRaw, blockRaw2:
	case blockZstd, blockZstd2:
		var err error
		if body, err = c.dec.DecodeAll(body, nil); err != nil {
			return nil, fmt.Errorf("decode block: %w", err)
		}
	default:
		return nil, fmt.Errorf("decode block: %w (format %d)", errCorrupt, block[0])
	}
	r := reader{b: body}
	n, columns := r.count(), r.count()
	if n > MaxBlockSamples || columns > maxColumns {
		return nil, fmt.Errorf("decode block: %w (%d samples of %d values)", errCorrupt, n, columns)
	}
	samples := make([]Sample, n)
	values := make([]int64, n*columns)
	var id uint64
	for i := range samples {
		id += r.uvarint()
		samples[i] = Sample{Stack: id, Values: values[i*columns : (i+1)*columns : (i+1)*columns]}
	}
	sized, period := false, int64(0)
	if block[0] >= blockRaw2 {
		switch r.byte() {
		case 0:
		case 1:
			sized, period = true, r.varint()
			for i := range samples {
				samples[i].Size = r.uvarint()
			}
		default:
			r.fail()
		}
	}
	for j := range columns {
		switch mode := r.byte(); {
		case mode == modeZero:
		case mode == modeScaled:
			scale := r.varint()
			for _, s := range samples {
				s.Values[j] = s.Values[0] * scale
			}
		case mode == modeVarints:
			for _, s := range samples {
				s.Values[j] = r.varint()
			}
		case mode == modeCounted && sized:
			for _, s := range samples {
				s.Values[j] = r.varint() * unitOf(s.Size, period)
			}
			for _, s := range samples {
				s.Values[j] += r.varint()
			}
		case mode == modeSized && sized:
			b := r.uvarint()
			if b >= uint64(j) {
				r.fail()
				break
			}
			for _, s := range samples {
				s.Values[j] = s.Values[b]*int64(s.Size) + r.varint()
			}
		default:
			r.fail()
		}
	}
	if err := r.done("block"); err != nil {
		return nil, fmt.Errorf("decode %w", err)
	}
	return samples, nil
}
