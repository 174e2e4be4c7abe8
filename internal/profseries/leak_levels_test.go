package profseries

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
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
			if want := nonZero(sumsByStack(samples, col)); !reflect.DeepEqual(levelsMap(got), want) || !slices.IsSorted(got.Stacks) {
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

// nonZero returns sums without the stacks whose sum is 0.
func nonZero(sums map[uint64]int64) map[uint64]int64 {
	out := map[uint64]int64{}
	for id, v := range sums {
		if v != 0 {
			out[id] = v
		}
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

// TestEncodeLevels: the levels a store keeps beside a real snapshot's
// block decode to the levels of its samples; a scrape of another type, or
// over a window, has none; damaged levels are refused.
func TestEncodeLevels(t *testing.T) {
	d := NewDictionary()
	at := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	for _, typ := range capturedTypes {
		sampleType, judged := LeakSampleType(typ)
		for _, p := range realProfiles(t, typ) {
			_, samples, err := Intern(p, d)
			if err != nil {
				t.Fatal(err)
			}
			s := &Scrape{Type: typ, Start: at, End: at, Profile: p}
			b := EncodeScrapeLevels(s, samples)
			if !judged {
				if b != nil {
					t.Fatalf("%s: levels of a type leaks are not judged on", typ)
				}
				continue
			}
			want := LevelsOf(Window{Start: at, End: at, Shape: shapeOf(p), Samples: samples}, sampleType)
			got := Levels{Window: want.Window}
			if err := DecodeLevels(b, &got); err != nil {
				t.Fatal(err)
			}
			if len(want.Stacks) == 0 || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: decoded levels %v %v, want %v %v", typ, got.Stacks, got.Values, want.Stacks, want.Values)
			}
			for n := range len(b) {
				if err := DecodeLevels(b[:n], &got); err == nil {
					t.Fatalf("%s: levels cut to %d of %d bytes decoded", typ, n, len(b))
				}
			}
			if err := DecodeLevels(append(slices.Clone(b), 0), &got); err == nil {
				t.Fatalf("%s: levels with a byte more decoded", typ)
			}
			s.End = at.Add(time.Second)
			if EncodeScrapeLevels(s, samples) != nil {
				t.Fatalf("%s: levels of a scrape over a window", typ)
			}
		}
	}
}
