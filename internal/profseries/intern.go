package profseries

import (
	"bytes"
	"fmt"

	"github.com/google/pprof/profile"
)

// A Sample is one sample of a scrape in interned form: the id of its stack
// (locations and labels) and its values, one per sample type.
type Sample struct {
	Stack  uint64
	Values []int64
	// Size is the sample's numeric label "bytes" where it has one value
	// (heap and allocs samples: the size of the objects), else 0. It is
	// part of the stack, so the same in every sample of one stack; blocks
	// keep it to store the values compactly (see the block layout).
	Size uint64
}

// Intern interns p's symbols, stacks and shape in t and returns the id of
// its shape and its samples, in p's order. Samples whose values are all
// zero are kept: the round trip is exact.
func Intern(p *profile.Profile, t SymbolTable) (shape uint64, samples []Sample, err error) {
	in := interner{t: t, functions: map[*profile.Function]uint64{}, mappings: map[*profile.Mapping]uint64{},
		locations: map[*profile.Location]uint64{}, nodes: map[[2]uint64]uint64{}}
	if shape, err = in.intern(KindShape, shapeOf(p).encode()); err != nil {
		return 0, nil, err
	}
	// Mappings first, in the profile's order: its first is the main
	// binary, which then gets the lowest id of them.
	for _, m := range p.Mapping {
		id, err := in.intern(KindMapping, mappingContent(m))
		if err != nil {
			return 0, nil, err
		}
		in.mappings[m] = id
	}
	samples = make([]Sample, 0, len(p.Sample))
	for _, s := range p.Sample {
		if len(s.Value) != len(p.SampleType) {
			return 0, nil, fmt.Errorf("intern profile: a sample has %d values for %d sample types", len(s.Value), len(p.SampleType))
		}
		id, err := in.stack(s)
		if err != nil {
			return 0, nil, err
		}
		samples = append(samples, Sample{Stack: id, Values: append([]int64(nil), s.Value...), Size: sizeLabel(s)})
	}
	return shape, samples, nil
}

// sizeLabel is the sample's Size: its numeric label "bytes", where it
// has exactly one positive value.
func sizeLabel(s *profile.Sample) uint64 {
	if vs := s.NumLabel["bytes"]; len(vs) == 1 && vs[0] > 0 {
		return uint64(vs[0])
	}
	return 0
}

// interner remembers the ids of one profile's items by pointer, so each
// is encoded and looked up once however many samples share it.
type interner struct {
	t         SymbolTable
	functions map[*profile.Function]uint64
	mappings  map[*profile.Mapping]uint64
	locations map[*profile.Location]uint64
	nodes     map[[2]uint64]uint64 // a caller's caller and leaf to its id
}

// stack interns the stack of s as a node: its callers, from the root, and
// its label set first; it returns the stack's id.
func (in *interner) stack(s *profile.Sample) (uint64, error) {
	set := stack{labels: s.Label, numLabels: s.NumLabel, numUnits: s.NumUnit}
	if len(s.Location) == 0 {
		return in.intern(KindStack, set.encode())
	}
	if len(s.Location) > maxStackDepth {
		return 0, fmt.Errorf("intern profile: a sample has %d locations, more than %d", len(s.Location), maxStackDepth)
	}
	var labels uint64
	if set.hasLabels() {
		var err error
		if labels, err = in.intern(KindStack, set.encode()); err != nil {
			return 0, err
		}
	}
	var caller uint64
	for i := len(s.Location) - 1; i > 0; i-- {
		leaf, err := in.location(s.Location[i])
		if err != nil {
			return 0, err
		}
		key := [2]uint64{caller, leaf}
		id, ok := in.nodes[key]
		if !ok {
			if id, err = in.intern(KindCaller, encodeCaller(caller, leaf)); err != nil {
				return 0, err
			}
			in.nodes[key] = id
		}
		caller = id
	}
	leaf, err := in.location(s.Location[0])
	if err != nil {
		return 0, err
	}
	return in.intern(KindStack, encodeNode(caller, leaf, labels))
}

func (in *interner) intern(k Kind, content []byte) (uint64, error) {
	id, err := in.t.Intern(k, Hash(k, content), content)
	if err != nil {
		return 0, fmt.Errorf("intern %s: %w", k, err)
	}
	return id, nil
}

func (in *interner) location(l *profile.Location) (uint64, error) {
	if id, ok := in.locations[l]; ok {
		return id, nil
	}
	loc := location{address: l.Address, folded: l.IsFolded}
	if m := l.Mapping; m != nil {
		id, ok := in.mappings[m]
		if !ok {
			var err error
			if id, err = in.intern(KindMapping, mappingContent(m)); err != nil {
				return 0, err
			}
			in.mappings[m] = id
		}
		loc.mapping = id
		loc.address -= m.Start
	}
	for _, ln := range l.Line {
		var fid uint64
		if f := ln.Function; f != nil {
			var ok bool
			if fid, ok = in.functions[f]; !ok {
				var err error
				if fid, err = in.intern(KindFunction, functionContent(f)); err != nil {
					return 0, err
				}
				in.functions[f] = fid
			}
		}
		loc.lines = append(loc.lines, line{function: fid, line: ln.Line, column: ln.Column})
	}
	id, err := in.intern(KindLocation, loc.encode())
	if err != nil {
		return 0, err
	}
	in.locations[l] = id
	return id, nil
}

// A Dictionary is a SymbolTable and SymbolSource in memory: what the
// store keeps in tables, for computing without one.
type Dictionary struct {
	items  [len(kindNames)]map[uint64][]byte // by id
	byHash [len(kindNames)]map[uint64]uint64 // hash to id
}

var kindNames = [...]string{"function", "mapping", "location", "stack", "shape", "caller"}

// NewDictionary returns an empty dictionary.
func NewDictionary() *Dictionary {
	d := &Dictionary{}
	for k := range d.items {
		d.items[k] = map[uint64][]byte{}
		d.byHash[k] = map[uint64]uint64{}
	}
	return d
}

// Intern implements SymbolTable.
func (d *Dictionary) Intern(k Kind, hash uint64, content []byte) (uint64, error) {
	if id, ok := d.byHash[k][hash]; ok {
		if !bytes.Equal(d.items[k][id], content) {
			return 0, fmt.Errorf("hash collision between two %ss", k)
		}
		return id, nil
	}
	id := uint64(len(d.items[k]) + 1)
	d.items[k][id] = bytes.Clone(content)
	d.byHash[k][hash] = id
	return id, nil
}

// Lookup implements SymbolSource.
func (d *Dictionary) Lookup(k Kind, ids []uint64) (map[uint64][]byte, error) {
	out := make(map[uint64][]byte, len(ids))
	for _, id := range ids {
		if c, ok := d.items[k][id]; ok {
			out[id] = c
		}
	}
	return out, nil
}

// Len returns how many items of kind k the dictionary holds.
func (d *Dictionary) Len(k Kind) int { return len(d.items[k]) }
