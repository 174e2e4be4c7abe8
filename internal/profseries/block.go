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
//	per value column: a mode byte, then
//	  modeVarints  one zigzag varint per sample
//	  modeZero     nothing: every value is 0
//	  modeScaled   one zigzag varint c: every value is c times column 0's
//
// Sorting by stack id makes the deltas small (ids are dense), and the
// scaled mode stores a CPU profile's nanoseconds, which are its sample
// counts times the period, in one varint. The first byte of a stored
// block says whether the rest is compressed (blockZstd) or not
// (blockRaw: tiny blocks zstd would make larger).
const (
	blockRaw  = 0
	blockZstd = 1

	modeVarints = 0
	modeZero    = 1
	modeScaled  = 2
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

// Encode encodes samples, each with columns values, as a block. The
// samples are sorted by stack in place (stably), which is the order Decode
// returns them in.
func (c *Codec) Encode(samples []Sample, columns int) ([]byte, error) {
	if len(samples) > MaxBlockSamples || columns > maxColumns {
		return nil, fmt.Errorf("encode block: %d samples of %d values, at most %d of %d", len(samples), columns, MaxBlockSamples, maxColumns)
	}
	slices.SortStableFunc(samples, func(a, b Sample) int { return cmp.Compare(a.Stack, b.Stack) })
	var w writer
	w.uvarint(uint64(len(samples)))
	w.uvarint(uint64(columns))
	var prev uint64
	for _, s := range samples {
		if len(s.Values) != columns {
			return nil, fmt.Errorf("encode block: a sample has %d values, want %d", len(s.Values), columns)
		}
		w.uvarint(s.Stack - prev)
		prev = s.Stack
	}
	for j := range columns {
		mode, scale := columnMode(samples, j)
		w.b = append(w.b, mode)
		switch mode {
		case modeScaled:
			w.varint(scale)
		case modeVarints:
			for _, s := range samples {
				w.varint(s.Values[j])
			}
		}
	}
	z := c.enc.EncodeAll(w.b, make([]byte, 1, len(w.b)/2+16))
	if len(z) < len(w.b)+1 {
		z[0] = blockZstd
		return z, nil
	}
	return append([]byte{blockRaw}, w.b...), nil
}

// columnMode chooses how column j is stored.
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
	case blockRaw:
	case blockZstd:
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
	for j := range columns {
		switch r.byte() {
		case modeZero:
		case modeScaled:
			scale := r.varint()
			for _, s := range samples {
				s.Values[j] = s.Values[0] * scale
			}
		case modeVarints:
			for _, s := range samples {
				s.Values[j] = r.varint()
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
