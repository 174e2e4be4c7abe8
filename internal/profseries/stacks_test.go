package profseries

import (
	"fmt"
	"slices"
	"testing"
)

// listSource is a SymbolSource whose stacks are given by content, as a
// store written in either form holds them.
type listSource map[uint64][]byte

func (s listSource) Lookup(k Kind, ids []uint64) (map[uint64][]byte, error) {
	out := map[uint64][]byte{}
	if k != KindStack {
		return out, nil
	}
	for _, id := range ids {
		if c, ok := s[id]; ok {
			out[id] = c
		}
	}
	return out, nil
}

type cachingSource struct {
	listSource
	cache *StackCache
}

func (s cachingSource) Stacks() *StackCache { return s.cache }

// TestStackNodes: real stacks interned as nodes resolve to the labels of
// their samples (TestRoundTrip checks their locations), in fewer bytes
// than listed whole; stacks listed whole, as stores written before hold them, still
// resolve; a cache answers as the source does.
func TestStackNodes(t *testing.T) {
	var nodeBytes, listBytes int
	for _, typ := range capturedTypes {
		d := NewDictionary()
		lists := listSource{}
		want := map[uint64]stack{}
		for _, p := range realProfiles(t, typ) {
			_, samples, err := Intern(p, d)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range samples {
				want[s.Stack] = stack{labels: p.Sample[i].Label, numLabels: p.Sample[i].NumLabel, numUnits: p.Sample[i].NumUnit}
			}
		}
		var ids []uint64
		for id := range want {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		got := map[uint64]stack{}
		if err := resolveStacks(d, ids, got); err != nil {
			t.Fatal(err)
		}
		contents, _ := d.Lookup(KindStack, allIDs(d.Len(KindStack)))
		for _, c := range contents {
			nodeBytes += len(c)
		}
		for _, id := range ids {
			st := got[id]
			if fmt.Sprint(st.labels, st.numLabels, st.numUnits) != fmt.Sprint(want[id].labels, want[id].numLabels, want[id].numUnits) {
				t.Errorf("%s stack %d: labels %v, want %v", typ, id, st.labels, want[id].labels)
			}
			lists[id] = st.encode()
			listBytes += len(lists[id])
		}
		// The same stacks listed whole resolve to the same, through a
		// cache or not.
		cs := cachingSource{lists, NewStackCache(1 << 10)}
		for round := range 2 {
			again := map[uint64]stack{}
			if err := resolveStacks(cs, ids, again); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(again) != fmt.Sprint(got) {
				t.Errorf("%s: stacks listed whole resolve otherwise than as nodes (round %d)", typ, round)
			}
		}
	}
	if nodeBytes >= listBytes {
		t.Errorf("stacks take %d bytes as nodes, %d listed whole", nodeBytes, listBytes)
	}
	t.Logf("stacks of the committed rounds: %d bytes as nodes, %d listed whole", nodeBytes, listBytes)
}

func allIDs(n int) []uint64 {
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i + 1)
	}
	return ids
}

// TestStackLoops: nodes whose callers loop, or go deeper than
// maxStackDepth, or whose label set is not one, are an error, never a
// hang.
func TestStackLoops(t *testing.T) {
	loop := listSource{1: encodeNode(2, 7, 0), 2: encodeNode(1, 8, 0)}
	if err := resolveStacks(loop, []uint64{1}, map[uint64]stack{}); err == nil {
		t.Error("a loop of callers resolved")
	}
	deep := listSource{}
	for id := uint64(1); id <= maxStackDepth+1; id++ {
		deep[id] = encodeNode(id-1, id, 0)
	}
	if err := resolveStacks(deep, []uint64{maxStackDepth + 1}, map[uint64]stack{}); err == nil {
		t.Error("a stack deeper than the bound resolved")
	}
	// A label set must be one: a stack of no locations listed whole.
	notSet := listSource{1: encodeNode(0, 4, 2), 2: encodeNode(0, 5, 0)}
	if err := resolveStacks(notSet, []uint64{1}, map[uint64]stack{}); err == nil {
		t.Error("a node resolved with a node for its label set")
	}
	out := map[uint64]stack{}
	if err := resolveStacks(deep, []uint64{maxStackDepth}, out); err != nil || len(out[maxStackDepth].locations) != maxStackDepth {
		t.Errorf("a stack at the bound: %d locations, %v", len(out[maxStackDepth].locations), err)
	}
}

func FuzzStack(f *testing.F) {
	d := NewDictionary()
	if _, _, err := Intern(realProfiles(f, Heap)[0], d); err != nil {
		f.Fatal(err)
	}
	contents, _ := d.Lookup(KindStack, allIDs(3))
	f.Add(contents[1], contents[2], contents[3])
	f.Add(stack{locations: []uint64{1, 2, 3}}.encode(), encodeNode(1, 4, 0), encodeNode(2, 5, 0))
	f.Add(encodeNode(2, 7, 0), encodeNode(3, 8, 0), encodeNode(1, 9, 0))
	f.Add(stack{labels: map[string][]string{"a": {"b"}}}.encode(), encodeNode(0, 4, 1), encodeNode(2, 5, 1))
	f.Add(encodeNode(0, 4, 2), encodeNode(0, 5, 3), encodeNode(0, 5, 1))
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		for _, content := range [][]byte{a, b, c} {
			st, err := decodeStack(content)
			if err != nil {
				continue
			}
			again := st.encode()
			if st.node {
				again = encodeNode(st.caller, st.locations[0], st.labelSet)
			}
			st2, err := decodeStack(again)
			if err != nil || fmt.Sprint(st2) != fmt.Sprint(st) {
				t.Fatalf("re-encoding a stack changed it: %v, then %v, %v", st, st2, err)
			}
		}
		src := cachingSource{listSource{1: a, 2: b, 3: c}, NewStackCache(64)}
		for range 2 {
			out := map[uint64]stack{}
			if err := resolveStacks(src, []uint64{1, 2, 3}, out); err != nil {
				return
			}
			for id, st := range out {
				if len(st.locations) > maxStackDepth {
					t.Fatalf("stack %d resolved to %d locations", id, len(st.locations))
				}
			}
		}
	})
}
