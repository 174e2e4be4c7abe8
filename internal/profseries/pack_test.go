package profseries

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
)

// packedChain encodes the committed real scrapes of typ as a store writes
// them (each against the one before, the first alone, a late one aside)
// and returns the blocks with the samples each must decode to.
func packedChain(t testing.TB, c *Codec, typ string) (blocks [][]byte, want [][]Sample) {
	t.Helper()
	scrapes, columns, period := chainOf(t, typ)
	for i, samples := range scrapes {
		var b []byte
		var err error
		switch {
		case i == 0:
			b, err = c.Encode(slices.Clone(samples), columns, period)
		case i == len(scrapes)-1:
			b, err = c.EncodeAside(slices.Clone(samples), columns, period)
		default:
			b, err = c.EncodeAgainst(slices.Clone(samples), columns, period, scrapes[i-1])
		}
		if err != nil {
			t.Fatal(err)
		}
		blocks, want = append(blocks, b), append(want, samples)
	}
	return blocks, want
}

// TestPack: the real scrapes of every type, packed, unpack to blocks that
// decode through a Chain to exactly the samples stored, and the pack is
// smaller than the blocks apart; references name their entries, and a
// reference is never packed again.
func TestPack(t *testing.T) {
	c := NewCodec()
	for _, typ := range []string{CPU, Heap, Allocs, Goroutine, Mutex, Block} {
		blocks, want := packedChain(t, c, typ)
		pack, refs, err := c.Pack(blocks)
		if err != nil {
			t.Fatal(err)
		}
		apart := 0
		for _, b := range blocks {
			apart += len(b)
		}
		if len(pack) >= apart {
			t.Errorf("%s: the pack takes %d bytes, the blocks apart %d", typ, len(pack), apart)
		}
		got, err := c.Unpack(pack)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(blocks) {
			t.Fatalf("%s: %d blocks unpacked, %d packed", typ, len(got), len(blocks))
		}
		var ch Chain
		for i, ref := range refs {
			entry, packed, err := PackedEntry(ref)
			if err != nil || !packed || entry != i {
				t.Fatalf("%s: reference %d names entry %d (packed %v, %v)", typ, i, entry, packed, err)
			}
			samples, err := ch.Decode(c, got[entry])
			if err != nil {
				t.Fatalf("%s %d: %v", typ, i, err)
			}
			if !reflect.DeepEqual(samples, want[i]) {
				t.Fatalf("%s %d: unpacked block decodes to other samples than were stored", typ, i)
			}
		}
		if _, _, err := c.Pack([][]byte{blocks[0], refs[1]}); err == nil {
			t.Errorf("%s: a reference was packed", typ)
		}
		if _, err := c.Decode(refs[0]); err == nil {
			t.Errorf("%s: a reference decoded as a block", typ)
		}
	}
	if _, packed, _ := PackedEntry([]byte{blockRaw2, 0}); packed {
		t.Error("a block read as a reference")
	}
	if _, _, err := PackedEntry([]byte{blockPacked, 0x80}); err == nil {
		t.Error("a truncated reference read")
	}
}

// FuzzPack: any bytes unpack to an error or to blocks within the pack's
// bounds, and real blocks packed unpack to their uncompressed forms.
func FuzzPack(f *testing.F) {
	c := NewCodec()
	blocks, _ := packedChain(f, c, Heap)
	pack, _, err := c.Pack(blocks)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pack)
	raw := bytes.Clone(pack)
	if u, err := c.Unpack(pack); err == nil {
		var w writer
		w.uvarint(uint64(len(u)))
		for _, b := range u {
			w.uvarint(uint64(len(b)))
			w.b = append(w.b, b...)
		}
		raw = append([]byte{packRaw}, w.b...)
	}
	f.Add(raw)
	f.Add([]byte{packRaw, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, pack []byte) {
		got, err := c.Unpack(pack)
		if err != nil {
			return
		}
		if len(got) > MaxPackBlocks {
			t.Fatalf("%d blocks unpacked", len(got))
		}
		// What unpacks packs again, unless it holds a reference or a
		// block whose header is not one.
		for _, b := range got {
			if len(b) > 0 && b[0] == blockPacked {
				return
			}
			if h, err := readHeader(b); err != nil || h.zstd {
				return
			}
		}
		again, _, err := c.Pack(got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.Unpack(again)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, got) && !(len(back) == 0 && len(got) == 0) {
			t.Fatal("blocks packed again unpack to other blocks")
		}
	})
}
