package profseries

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestLevelsAsSums checks the levels leaks are judged on against the
// straightforward way, on committed real goroutine and heap scrapes
// stored as a chain (each coded against the one before): the levels a
// Chain reads from each block are the sums by stack of the samples it
// decodes; and the levels of a run of snapshots (stackLevels) are, for
// every stack of the last with a level above 0, its sum in each snapshot
// by a map per snapshot — with the samples of some snapshots shuffled
// and split in two, as a Window may hold them.
func TestLevelsAsSums(t *testing.T) {
	c, d := NewCodec(), NewDictionary()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, lt := range LeakTypes {
		if lt.Type == GoroutineLeak {
			continue // not in the recorded scrapes
		}
		var ws []Window
		for range 6 {
			for _, p := range realProfiles(t, lt.Type) {
				w, _ := window(t, c, d, p)
				ws = append(ws, w)
			}
		}
		col := levelColumn(ws[0].Shape, lt.SampleType)
		var ch, decoder Chain
		var base []Sample
		for i, w := range ws {
			block, err := c.EncodeAgainst(slices.Clone(w.Samples), len(w.Shape.SampleTypes), w.Shape.Period, base)
			if err != nil {
				t.Fatal(err)
			}
			samples, err := decoder.Decode(c, block)
			if err != nil {
				t.Fatal(err)
			}
			base = samples
			got := Levels{Window: Window{Shape: w.Shape}}
			if err := ch.Levels(c, block, &got, lt.SampleType); err != nil {
				t.Fatal(err)
			}
			if want := sumsByStack(samples, col); !reflect.DeepEqual(levelsMap(got), want) || !slices.IsSorted(got.Stacks) {
				t.Fatalf("%s block %d: levels %v %v, want %v", lt.Type, i, got.Stacks, got.Values, want)
			}
		}
		var levels []Levels
		for i, w := range ws {
			if i%3 == 1 {
				w.Samples = shuffledSplit(rng, w.Samples)
			}
			levels = append(levels, LevelsOf(w, lt.SampleType))
		}
		for _, n := range []int{1, len(ws) / 2, len(ws)} {
			stacks, got := stackLevels(levels[:n])
			sums := make([]map[uint64]int64, n)
			var want []int64
			for i, w := range ws[:n] {
				sums[i] = sumsByStack(w.Samples, col)
			}
			var wantStacks []uint64
			for id, v := range sums[n-1] {
				if v > 0 {
					wantStacks = append(wantStacks, id)
				}
			}
			slices.Sort(wantStacks)
			for i := range n {
				for _, id := range wantStacks {
					want = append(want, sums[i][id])
				}
			}
			if !slices.Equal(stacks, wantStacks) || !slices.Equal(got, want) {
				t.Fatalf("%s, %d snapshots: stacks %v levels %v,\nwant %v %v", lt.Type, n, stacks, got, wantStacks, want)
			}
			if len(stacks) == 0 {
				t.Fatalf("%s, %d snapshots: no stack", lt.Type, n)
			}
		}
	}
}

func sumsByStack(samples []Sample, col int) map[uint64]int64 {
	out := map[uint64]int64{}
	for _, s := range samples {
		out[s.Stack] += s.Values[col]
	}
	return out
}

func levelsMap(l Levels) map[uint64]int64 {
	out := map[uint64]int64{}
	for k, id := range l.Stacks {
		out[id] = l.Values[k]
	}
	if len(out) != len(l.Stacks) {
		return nil // a stack twice
	}
	return out
}

// shuffledSplit returns samples in a random order, each split into two
// samples of the same stack whose values add up to its own.
func shuffledSplit(rng *rand.Rand, samples []Sample) []Sample {
	var out []Sample
	for _, s := range samples {
		a, b := slices.Clone(s.Values), make([]int64, len(s.Values))
		for j, v := range a {
			b[j] = v / 3
			a[j] = v - b[j]
		}
		out = append(out, Sample{Stack: s.Stack, Values: a, Size: s.Size}, Sample{Stack: s.Stack, Values: b, Size: s.Size})
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
