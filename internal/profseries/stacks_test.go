package profseries

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/pprof/profile"
)

// listSource is a SymbolSource whose stacks and callers are given by
// content, as a store written in either form holds them.
type listSource map[Kind]map[uint64][]byte

func (s listSource) Lookup(k Kind, ids []uint64) (map[uint64][]byte, error) {
	out := map[uint64][]byte{}
	for _, id := range ids {
		if c, ok := s[k][id]; ok {
			out[id] = c
		}
	}
	return out, nil
}

func stacksAndCallers(stacks, callers map[uint64][]byte) listSource {
	return listSource{KindStack: stacks, KindCaller: callers}
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
		lists := map[uint64][]byte{}
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
		for _, k := range []Kind{KindStack, KindCaller} {
			contents, _ := d.Lookup(k, allIDs(d.Len(k)))
			for _, c := range contents {
				nodeBytes += len(c)
			}
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
		cs := cachingSource{stacksAndCallers(lists, nil), NewStackCache(1 << 10)}
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
	loop := stacksAndCallers(map[uint64][]byte{1: encodeNode(1, 7, 0)}, map[uint64][]byte{1: encodeCaller(2, 8), 2: encodeCaller(1, 9)})
	if err := resolveStacks(loop, []uint64{1}, map[uint64]stack{}); err == nil {
		t.Error("a loop of callers resolved")
	}
	callers := map[uint64][]byte{}
	for id := uint64(1); id <= maxStackDepth; id++ {
		callers[id] = encodeCaller(id-1, id)
	}
	deep := stacksAndCallers(map[uint64][]byte{1: encodeNode(maxStackDepth, 7, 0), 2: encodeNode(maxStackDepth-1, 7, 0)}, callers)
	if err := resolveStacks(deep, []uint64{1}, map[uint64]stack{}); err == nil {
		t.Error("a stack deeper than the bound resolved")
	}
	out := map[uint64]stack{}
	if err := resolveStacks(deep, []uint64{2}, out); err != nil || len(out[2].locations) != maxStackDepth {
		t.Errorf("a stack at the bound: %d locations, %v", len(out[2].locations), err)
	}
	// A label set must be one: a stack of no locations listed whole.
	notSet := stacksAndCallers(map[uint64][]byte{1: encodeNode(0, 4, 2), 2: encodeNode(0, 5, 0)}, nil)
	if err := resolveStacks(notSet, []uint64{1}, map[uint64]stack{}); err == nil {
		t.Error("a node resolved with a node for its label set")
	}
}

// TestFunctionForms: a function whose system name is its name is stored
// once, shorter; one whose system name differs, and one written before
// (the system name always written), read back whole.
func TestFunctionForms(t *testing.T) {
	same := &profile.Function{Name: "main.leftpad", SystemName: "main.leftpad", Filename: "/src/leftpad.go", StartLine: 12}
	other := &profile.Function{Name: "leftpad", SystemName: "_Z7leftpadv", Filename: "leftpad.cc", StartLine: -3}
	var w writer
	w.str(same.Name)
	w.str(same.SystemName)
	w.str(same.Filename)
	w.varint(same.StartLine)
	before := w.b
	for _, c := range []struct {
		f       *profile.Function
		content []byte
	}{{same, functionContent(same)}, {other, functionContent(other)}, {same, before}} {
		got, err := decodeFunction(7, c.content)
		if err != nil || got.Name != c.f.Name || got.SystemName != c.f.SystemName || got.Filename != c.f.Filename || got.StartLine != c.f.StartLine || got.ID != 7 {
			t.Errorf("%q: %+v, %v; want %+v", c.content, got, err, c.f)
		}
	}
	if n, m := len(functionContent(same)), len(before); n >= m {
		t.Errorf("a function whose system name is its name takes %d bytes, %d as written before", n, m)
	}
}

func FuzzStack(f *testing.F) {
	d := NewDictionary()
	if _, _, err := Intern(realProfiles(f, Heap)[0], d); err != nil {
		f.Fatal(err)
	}
	stacks, _ := d.Lookup(KindStack, allIDs(2))
	callers, _ := d.Lookup(KindCaller, allIDs(2))
	f.Add(stacks[1], stacks[2], callers[1], callers[2])
	f.Add(stack{locations: []uint64{1, 2, 3}}.encode(), encodeNode(1, 4, 0), encodeCaller(0, 5), encodeCaller(1, 6))
	f.Add(encodeNode(2, 7, 0), encodeNode(1, 8, 0), encodeCaller(2, 9), encodeCaller(1, 3))
	f.Add(stack{labels: map[string][]string{"a": {"b"}}}.encode(), encodeNode(0, 4, 1), encodeCaller(0, 1), []byte{})
	f.Add(encodeNode(0, 4, 2), encodeNode(0, 5, 1), []byte{}, []byte{})
	f.Add(functionContent(&profile.Function{Name: "a", SystemName: "a"}), functionContent(&profile.Function{Name: "a", SystemName: "b"}), []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, a, b, c, e []byte) {
		for _, content := range [][]byte{a, b, c, e} {
			if fn, err := decodeFunction(1, content); err == nil {
				back, err := decodeFunction(1, functionContent(fn))
				if err != nil || *back != *fn {
					t.Fatalf("re-encoding a function changed it: %+v, then %+v, %v", fn, back, err)
				}
			}
			if caller, leaf, err := CallerRefs(content); err == nil {
				if c2, l2, err := CallerRefs(encodeCaller(caller, leaf)); err != nil || c2 != caller || l2 != leaf {
					t.Fatalf("re-encoding a caller changed it: %d %d, then %d %d, %v", caller, leaf, c2, l2, err)
				}
			}
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
		src := cachingSource{stacksAndCallers(map[uint64][]byte{1: a, 2: b}, map[uint64][]byte{1: c, 2: e}), NewStackCache(64)}
		var first string
		for round := range 2 {
			out := map[uint64]stack{}
			if err := resolveStacks(src, []uint64{1, 2}, out); err != nil {
				return
			}
			for id, st := range out {
				if len(st.locations) > maxStackDepth {
					t.Fatalf("stack %d resolved to %d locations", id, len(st.locations))
				}
			}
			if round == 0 {
				first = fmt.Sprint(out)
			} else if fmt.Sprint(out) != first {
				t.Fatalf("resolved through the cache, %s; before, %s", fmt.Sprint(out), first)
			}
		}
	})
}
