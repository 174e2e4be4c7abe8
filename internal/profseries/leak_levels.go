package profseries

import (
	"cmp"
	"fmt"
	"slices"
)

// Levels is one snapshot (heap, goroutines) reduced to the one sample
// type leaks are judged on: its window without samples, and per stack the
// sum of its samples' values of that type. A chained read makes it from
// the block's columns, so that judging a day of snapshots does not build
// a Sample for each of their samples.
type Levels struct {
	Window
	// Stacks are ascending and distinct; Values[i] is the level of
	// Stacks[i]. Both are nil where the snapshot has no values of the
	// sample type.
	Stacks []uint64
	Values []int64
}

// LevelsOf reduces w to its levels of sampleType.
func LevelsOf(w Window, sampleType string) Levels {
	l := Levels{Window: w}
	l.Samples = nil
	col := levelColumn(w.Shape, sampleType)
	if col < 0 {
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

// levelColumn is the column of shape's values of sampleType, -1 where it
// has none.
func levelColumn(shape Shape, sampleType string) int {
	return slices.IndexFunc(shape.SampleTypes, func(v ValueType) bool { return v.Type == sampleType })
}

// levels returns d's stacks, ascending and distinct, and the sum of each
// one's values of column col.
func (d *columns) levels(col int) ([]uint64, []int64) {
	stacks := make([]uint64, 0, d.n)
	values := make([]int64, 0, d.n)
	for i, id := range d.stacks[:d.n] {
		v := d.values[col][i]
		if k := len(stacks) - 1; k >= 0 && stacks[k] == id {
			values[k] += v
			continue
		}
		stacks = append(stacks, id)
		values = append(values, v)
	}
	return stacks, values
}

// Levels decodes block, the next block of ch's series in order of time,
// as Decode does, into l's stacks and their levels of sampleType (see
// LevelsOf); l's window, shape included, is the block's.
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
	if col := levelColumn(l.Shape, sampleType); col >= 0 {
		l.Stacks, l.Values = d.levels(col)
	}
	return nil
}
