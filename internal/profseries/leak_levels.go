package profseries

import (
	"cmp"
	"fmt"
	"slices"
)

// Levels is one snapshot (heap, goroutines) reduced to the one sample
// type leaks are judged on: its window without samples, and the stacks
// whose samples' values of that type do not sum to 0, with their sums.
// Judging a day of snapshots reads these, not a Sample for each of their
// samples: from the blocks' columns, or from the levels a store keeps
// beside each snapshot's block (EncodeLevels).
type Levels struct {
	Window
	// Stacks are ascending and distinct; Values[i] is the level of
	// Stacks[i], never 0. Both are nil where the snapshot has no values
	// of the sample type, and for a window that is not a snapshot (its
	// End after its Start: several scrapes merged), which leaks do not
	// judge.
	Stacks []uint64
	Values []int64
}

// LevelsOf reduces w to its levels of sampleType.
func LevelsOf(w Window, sampleType string) Levels {
	l := Levels{Window: w}
	l.Samples = nil
	col := levelColumn(w.Shape, sampleType)
	if col < 0 || !w.End.Equal(w.Start) {
		return l
	}
	samples := slices.Clone(w.Samples)
	slices.SortStableFunc(samples, func(a, b Sample) int { return cmp.Compare(a.Stack, b.Stack) })
	var d columns
	d.grow(len(samples), len(w.Shape.SampleTypes))
	for i, s := range samples {
		d.stacks[i] = s.Stack
		for j := range d.columns {
			d.values[j][i] = s.Values[j]
		}
	}
	l.Stacks, l.Values = d.levels(col)
	return l
}

// LeakSampleType is the sample type leaks of profile type typ are judged
// on (see LeakTypes); false for a type they are not.
func LeakSampleType(typ string) (string, bool) {
	for _, lt := range LeakTypes {
		if lt.Type == typ {
			return lt.SampleType, true
		}
	}
	return "", false
}

// levelColumn is the column of shape's values of sampleType, -1 where it
// has none.
func levelColumn(shape Shape, sampleType string) int {
	return slices.IndexFunc(shape.SampleTypes, func(v ValueType) bool { return v.Type == sampleType })
}

// levels returns the stacks of d, ascending and distinct, whose values of
// column col do not sum to 0, and their sums.
func (d *columns) levels(col int) ([]uint64, []int64) {
	var stacks []uint64
	var values []int64
	vs := d.values[col][:d.n]
	for i := 0; i < d.n; {
		id, sum := d.stacks[i], vs[i]
		for i++; i < d.n && d.stacks[i] == id; i++ {
			sum += vs[i]
		}
		if sum != 0 {
			stacks = append(stacks, id)
			values = append(values, sum)
		}
	}
	return stacks, values
}

// Levels decodes block, the next block of ch's series in order of time,
// as Decode does, into l's levels of sampleType (see LevelsOf); l's
// window, shape included, is the block's.
func (ch *Chain) Levels(c *Codec, block []byte, l *Levels, sampleType string) error {
	d, err := ch.decode(c, block)
	if err != nil {
		return err
	}
	return l.setLevels(d, sampleType)
}

// Levels decodes block, coded alone (see Decode), into l as Chain.Levels
// does.
func (c *Codec) Levels(block []byte, l *Levels, sampleType string) error {
	var d columns
	if err := c.decode(block, &d, nil); err != nil {
		return err
	}
	return l.setLevels(&d, sampleType)
}

func (l *Levels) setLevels(d *columns, sampleType string) error {
	l.Stacks, l.Values = nil, nil
	if d.columns != len(l.Shape.SampleTypes) {
		return fmt.Errorf("decode block: %w (%d values a sample, its shape has %d)", errCorrupt, d.columns, len(l.Shape.SampleTypes))
	}
	if col := levelColumn(l.Shape, sampleType); col >= 0 && l.End.Equal(l.Start) {
		l.Stacks, l.Values = d.levels(col)
	}
	return nil
}

// EncodeLevels returns the levels of w, a window of profile type typ, as
// a store keeps them beside its block: nil where w is not a snapshot of
// a type leaks are judged on. Their layout:
//
//	has values   a byte: 0 where the snapshot has no values of the
//	             type's sample type (LeakSampleType), else 1, then
//	stacks       uvarint count, then the ids as ascending uvarint deltas
//	levels       a zigzag varint each
func EncodeLevels(typ string, w Window) []byte {
	sampleType, ok := LeakSampleType(typ)
	if !ok || !w.End.Equal(w.Start) {
		return nil
	}
	if levelColumn(w.Shape, sampleType) < 0 {
		return []byte{0}
	}
	l := LevelsOf(w, sampleType)
	b := writer{b: []byte{1}}
	b.uvarint(uint64(len(l.Stacks)))
	var prev uint64
	for _, id := range l.Stacks {
		b.uvarint(id - prev)
		prev = id
	}
	for _, v := range l.Values {
		b.varint(v)
	}
	return b.b
}

// EncodeScrapeLevels is EncodeLevels of the scrape s, its samples
// Intern's.
func EncodeScrapeLevels(s *Scrape, samples []Sample) []byte {
	return EncodeLevels(s.Type, Window{Start: s.Start, End: s.End, Shape: shapeOf(s.Profile), Samples: samples})
}

// DecodeLevels decodes levels EncodeLevels made into l, whose window is
// the snapshot's.
func DecodeLevels(b []byte, l *Levels) error {
	r := reader{b: b}
	l.Stacks, l.Values = nil, nil
	switch r.byte() {
	case 0:
		return r.done("decode levels")
	case 1:
	default:
		r.fail()
		return r.done("decode levels")
	}
	n := r.count()
	// Every stack and level takes a byte at least.
	if n > MaxBlockSamples || 2*n > len(r.b) {
		return fmt.Errorf("decode levels: %w (%d stacks in %d bytes)", errCorrupt, n, len(r.b))
	}
	if n > 0 {
		l.Stacks, l.Values = make([]uint64, n), make([]int64, n)
	}
	var id uint64
	for i := range n {
		d := r.uvarint()
		if i > 0 && d == 0 {
			r.fail() // not ascending
		}
		id += d
		l.Stacks[i] = id
	}
	for i := range n {
		if l.Values[i] = r.varint(); l.Values[i] == 0 {
			r.fail()
		}
	}
	return r.done("decode levels")
}
