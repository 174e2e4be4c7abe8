package profseries

import (
	"encoding/binary"
	"fmt"
)

// A pack holds the blocks of one series over one span (an hour of
// scrapes), compressed together. A block is small (a CPU scrape of a few
// hundred samples is a few hundred bytes), so compressed alone it pays for
// its own tables and frame, and never shares what it repeats of the
// blocks before it (the same stacks, the same values): compressed
// together, an hour of them takes about half. Once a span is past, the
// store moves its blocks into a pack and keeps in each block's place a
// reference: the byte blockPacked and the block's entry in the pack, a
// uvarint. Its stored form:
//
//	format      packRaw, or packZstd: the rest compressed with zstd
//	blocks      uvarint
//	per block   uvarint length, then the block in its uncompressed form
//	            (raw, aside or against: the zstd formats decompressed)
//
// A block unpacked is an ordinary block, decoded as it was before it was
// packed: a Chain reads the hour's blocks in order whether they come
// from a pack or not.
const (
	blockPacked = 8

	packRaw  = 0
	packZstd = 1
)

// MaxPackBlocks bounds the blocks one pack may hold, so that a corrupt or
// hostile pack cannot make a reader allocate without limit.
const MaxPackBlocks = 1 << 16

// Pack stores blocks, in order, as one pack, and returns it with what is
// stored in each block's place. A block that is already a reference is
// refused.
func (c *Codec) Pack(blocks [][]byte) (pack []byte, refs [][]byte, err error) {
	if len(blocks) > MaxPackBlocks {
		return nil, nil, fmt.Errorf("pack: %d blocks, at most %d", len(blocks), MaxPackBlocks)
	}
	var w writer
	w.uvarint(uint64(len(blocks)))
	refs = make([][]byte, len(blocks))
	for i, b := range blocks {
		if len(b) > 0 && b[0] == blockPacked {
			return nil, nil, fmt.Errorf("pack block %d: already packed", i)
		}
		h, err := readHeader(b)
		if err != nil {
			return nil, nil, fmt.Errorf("pack block %d: %w", i, err)
		}
		plain := b
		if h.zstd {
			// The uncompressed form: the format before it (each zstd
			// format follows its raw one), the header, the body.
			body, err := c.dec.DecodeAll(h.body, nil)
			if err != nil {
				return nil, nil, fmt.Errorf("pack block %d: %w", i, err)
			}
			plain = append(append([]byte{h.format - 1}, b[1:len(b)-len(h.body)]...), body...)
		}
		w.uvarint(uint64(len(plain)))
		w.b = append(w.b, plain...)
		refs[i] = binary.AppendUvarint([]byte{blockPacked}, uint64(i))
	}
	z := c.enc.EncodeAll(w.b, make([]byte, 1, len(w.b)/2+16))
	if len(z) < len(w.b)+1 {
		z[0] = packZstd
		return z, refs, nil
	}
	return append([]byte{packRaw}, w.b...), refs, nil
}

// PackedEntry reports whether block is a reference into a pack, and to
// which of its blocks.
func PackedEntry(block []byte) (entry int, packed bool, err error) {
	if len(block) == 0 || block[0] != blockPacked {
		return 0, false, nil
	}
	n, k := binary.Uvarint(block[1:])
	if k <= 0 || k != len(block)-1 || n >= MaxPackBlocks {
		return 0, true, fmt.Errorf("packed block: %w (bad reference)", errCorrupt)
	}
	return int(n), true, nil
}

// Unpack returns the blocks of a pack, in the order they were packed.
// They share the memory of one buffer.
func (c *Codec) Unpack(pack []byte) ([][]byte, error) {
	if len(pack) == 0 {
		return nil, fmt.Errorf("unpack: %w (empty)", errCorrupt)
	}
	body := pack[1:]
	switch pack[0] {
	case packRaw:
	case packZstd:
		var err error
		if body, err = c.dec.DecodeAll(body, nil); err != nil {
			return nil, fmt.Errorf("unpack: %w", err)
		}
	default:
		return nil, fmt.Errorf("unpack: %w (format %d)", errCorrupt, pack[0])
	}
	n, k := binary.Uvarint(body)
	if k <= 0 || n > MaxPackBlocks {
		return nil, fmt.Errorf("unpack: %w (block count)", errCorrupt)
	}
	body = body[k:]
	blocks := make([][]byte, n)
	for i := range blocks {
		size, k := binary.Uvarint(body)
		if k <= 0 || size > uint64(len(body)-k) {
			return nil, fmt.Errorf("unpack: %w (block %d of %d)", errCorrupt, i, n)
		}
		blocks[i] = body[k : k+int(size) : k+int(size)]
		body = body[k+int(size):]
	}
	if len(body) != 0 {
		return nil, fmt.Errorf("unpack: %w (%d bytes after the last block)", errCorrupt, len(body))
	}
	return blocks, nil
}
