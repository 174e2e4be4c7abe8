package profseries

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// chainOf interns the committed real scrapes of typ and returns each
// one's samples, sorted by stack as a block returns them.
func chainOf(t testing.TB, typ string) (scrapes [][]Sample, columns int, period int64) {
	t.Helper()
	d := NewDictionary()
	for _, p := range realProfiles(t, typ) {
		_, samples, err := Intern(p, d)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortStableFunc(samples, func(a, b Sample) int { return cmp.Compare(a.Stack, b.Stack) })
		scrapes = append(scrapes, samples)
		columns, period = len(p.SampleType), p.Period
	}
	return scrapes, columns, period
}

// TestEncodeAgainst: each real scrape coded against the one before
// decodes to exactly its samples through a Chain, and a heap snapshot so
// coded is smaller than alone.
func TestEncodeAgainst(t *testing.T) {
	c := NewCodec()
	for _, typ := range []string{Heap, Allocs, Goroutine, CPU} {
		scrapes, columns, period := chainOf(t, typ)
		var ch Chain
		var alone, against int
		for i, samples := range scrapes {
			var base []Sample
			if i > 0 {
				base = scrapes[i-1]
			}
			a, err := c.Encode(slices.Clone(samples), columns, period)
			if err != nil {
				t.Fatal(err)
			}
			b, err := c.EncodeAgainst(slices.Clone(samples), columns, period, base)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > len(a) {
				t.Errorf("%s %d: %d bytes against the one before, %d alone", typ, i, len(b), len(a))
			}
			alone, against = alone+len(a), against+len(b)
			got, err := ch.Decode(c, b)
			if err != nil {
				t.Fatalf("%s %d: %v", typ, i, err)
			}
			if !reflect.DeepEqual(got, samples) {
				t.Fatalf("%s %d: decoded samples differ from those encoded", typ, i)
			}
		}
		t.Logf("%s: %d bytes alone, %d against the scrape before", typ, alone, against)
		// The committed scrapes are the first 40 s of a process, whose heap
		// still gains stacks every scrape; later ones save more (see
		// bench/scrape/README.md).
		if typ == Heap && against >= alone*9/10 {
			t.Errorf("heap: %d bytes against the scrape before, %d alone: less than a tenth saved", against, alone)
		}
	}
}

// TestChainAside: a block coded aside between a block and the one coded
// against it does not push the earlier out of the Chain; a block coded
// against one the Chain did not read is refused, not decoded against
// another.
func TestChainAside(t *testing.T) {
	c := NewCodec()
	scrapes, columns, period := chainOf(t, Heap)
	first, err := c.Encode(slices.Clone(scrapes[0]), columns, period)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.EncodeAgainst(slices.Clone(scrapes[1]), columns, period, scrapes[0])
	if err != nil {
		t.Fatal(err)
	}
	if h, err := readHeader(second); err != nil || !h.against {
		t.Fatalf("the second heap scrape is not coded against the first (%v)", err)
	}
	var ch Chain
	if err := ch.Read(c, first); err != nil {
		t.Fatal(err)
	}
	for i := 2; i < len(scrapes)+chainSlots; i++ {
		late, err := c.EncodeAside(slices.Clone(scrapes[i%len(scrapes)]), columns, period)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ch.Decode(c, late); err != nil || !reflect.DeepEqual(got, scrapes[i%len(scrapes)]) {
			t.Fatalf("a block coded aside: %v", err)
		}
	}
	got, err := ch.Decode(c, second)
	if err != nil || !reflect.DeepEqual(got, scrapes[1]) {
		t.Fatalf("the block coded against the first, after blocks aside: %v", err)
	}
	if _, err := c.Decode(second); err == nil {
		t.Error("a block coded against another decoded alone")
	}
	var other Chain
	if err := other.Read(c, mustEncode(t, c, scrapes[2], columns, period)); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Decode(c, second); err == nil {
		t.Error("a block decoded against a block it was not coded against")
	}
}

// TestChainTail: the tail of a Chain at any point of a chain, each block
// coded against the one before, decodes the rest of it exactly as the
// Chain does, and decoding through either leaves the other as it was; a
// block coded against an earlier block than the last is refused by the
// tail, decoded by the Chain.
func TestChainTail(t *testing.T) {
	c := NewCodec()
	for _, typ := range []string{Heap, Allocs, Goroutine} {
		real, columns, period := chainOf(t, typ)
		// A chain longer than a Chain keeps, of three real scrapes in
		// turn (so that no block a Chain keeps repeats another).
		if len(real) < 3 {
			t.Fatalf("%s: %d real scrapes, want 3", typ, len(real))
		}
		var scrapes [][]Sample
		for i := range 3 * chainSlots {
			scrapes = append(scrapes, real[i%3])
		}
		blocks := make([][]byte, len(scrapes))
		for i, samples := range scrapes {
			var base []Sample
			if i > 0 {
				base = scrapes[i-1]
			}
			b, err := c.EncodeAgainst(slices.Clone(samples), columns, period, base)
			if err != nil {
				t.Fatal(err)
			}
			blocks[i] = b
		}
		for at := 1; at < len(blocks); at++ {
			var ch Chain
			for _, b := range blocks[:at] {
				if err := ch.Read(c, b); err != nil {
					t.Fatal(err)
				}
			}
			tail := ch.Tail()
			if n := len(scrapes[at-1]); tail.Size() < 8*n || tail.Size()*2 > ch.Size() && at >= chainSlots {
				t.Errorf("%s: the tail after %d blocks says it takes %d bytes, the Chain %d (%d samples a block)", typ, at, tail.Size(), ch.Size(), n)
			}
			// The tail decodes the rest, then the Chain does: each gets
			// the scrapes as encoded, so neither changed the other.
			for _, dec := range []*Chain{tail, &ch} {
				for i := at; i < len(blocks); i++ {
					got, err := dec.Decode(c, blocks[i])
					if err != nil {
						t.Fatalf("%s: block %d after a tail at %d: %v", typ, i, at, err)
					}
					if !reflect.DeepEqual(got, scrapes[i]) {
						t.Fatalf("%s: block %d after a tail at %d decodes to other samples", typ, i, at)
					}
				}
			}
		}
		// A block coded against the last but one: the Chain decodes it,
		// its tail refuses it (where it is coded against it: a small
		// block may be coded alone).
		var ch Chain
		for _, b := range blocks[:3] {
			if err := ch.Read(c, b); err != nil {
				t.Fatal(err)
			}
		}
		skipping, err := c.EncodeAgainst(slices.Clone(scrapes[3]), columns, period, scrapes[1])
		if err != nil {
			t.Fatal(err)
		}
		if h, err := readHeader(skipping); err != nil || !h.against {
			if typ == Heap {
				t.Fatalf("heap: a scrape coded against the one before was coded alone (%v)", err)
			}
			continue
		}
		if _, err := ch.Tail().Decode(c, skipping); err == nil {
			t.Errorf("%s: a tail decoded a block coded against one before its last", typ)
		}
		if got, err := ch.Decode(c, skipping); err != nil || !reflect.DeepEqual(got, scrapes[3]) {
			t.Errorf("%s: the Chain did not decode a block coded against the last but one: %v", typ, err)
		}
	}
}

func mustEncode(t testing.TB, c *Codec, samples []Sample, columns int, period int64) []byte {
	t.Helper()
	b, err := c.Encode(slices.Clone(samples), columns, period)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzChain decodes a block, then a second through the same Chain: what
// decodes re-encodes against what the first decoded to, and decodes back
// the same.
func FuzzChain(f *testing.F) {
	c := NewCodec()
	scrapes, columns, period := chainOf(f, Heap)
	first, err := c.Encode(slices.Clone(scrapes[0]), columns, period)
	if err != nil {
		f.Fatal(err)
	}
	second, err := c.EncodeAgainst(slices.Clone(scrapes[1]), columns, period, scrapes[0])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(first, second)
	f.Add(first, second[:len(second)-3])
	f.Add([]byte{blockRaw2, 1, 1, 1, 0, modeVarints, 2}, []byte{blockRawAgainst, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, modeVarintsDelta, 2})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var ch Chain
		base, err := ch.Decode(c, a)
		if err != nil {
			return
		}
		samples, err := ch.Decode(c, b)
		if err != nil {
			return
		}
		k := 0
		if len(samples) > 0 {
			k = len(samples[0].Values)
		}
		again, err := c.EncodeAgainst(slices.Clone(samples), k, 512*1024, base)
		if err != nil {
			t.Fatal(err)
		}
		var ch2 Chain
		baseK := 0
		if len(base) > 0 {
			baseK = len(base[0].Values)
		}
		if err := ch2.Read(c, mustEncode(t, c, base, baseK, 512*1024)); err != nil {
			t.Fatal(err)
		}
		back, err := ch2.Decode(c, again)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(back) != fmt.Sprint(samples) {
			t.Fatalf("re-encoding changed the samples")
		}
	})
}
