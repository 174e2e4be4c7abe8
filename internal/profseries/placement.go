package profseries

import (
	"slices"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
)

// A placement says, of each stack of a set, which functions it holds: the
// distinct names of its frames as profiles.Frames reads them (and
// profiles.Functions ranks them), leaf first. A stack adds its value to
// the cum of every function it holds and to the flat of the first. Stacks
// are placed once for a whole range, so that what each scrape or step
// adds up is a pass over its samples, not a profile built and ranked.
type placement struct {
	// names are the functions, by index.
	names []string
	// holds lists, by stack id, the indexes of the functions the stack
	// holds, leaf first, each once.
	holds map[uint64][]int32
}

// place places the stacks ids, which sy resolved.
func place(sy *Symbols, ids []uint64) (*placement, error) {
	// One sample per stack: the profile's samples are read only for
	// their frames.
	probe := Window{Samples: make([]Sample, len(ids))}
	for i, id := range ids {
		probe.Samples[i] = Sample{Stack: id}
	}
	p, err := sy.Profile(probe)
	if err != nil {
		return nil, err
	}
	pl := &placement{holds: make(map[uint64][]int32, len(ids))}
	index := map[string]int32{}
	for i, s := range p.Sample {
		var fs []int32
		for _, f := range profiles.Frames(s) {
			k, ok := index[f.Name()]
			if !ok {
				k = int32(len(pl.names))
				index[f.Name()] = k
				pl.names = append(pl.names, f.Name())
			}
			if !slices.Contains(fs, k) {
				fs = append(fs, k)
			}
		}
		pl.holds[ids[i]] = fs
	}
	return pl, nil
}

// index is the index of the function named name, -1 when no stack holds
// it.
func (pl *placement) index(name string) int32 {
	return int32(slices.Index(pl.names, name))
}

// cumShares is each function's cum share of w (by index), of the sample
// type sampleType ("" for the default): the CumShare of its row in
// profiles.Functions of w's profile, 0 where it has none. Every stack of w
// must be placed.
func (pl *placement) cumShares(w Window, sampleType string) ([]float64, error) {
	vi, err := w.Shape.sampleIndex(sampleType)
	if err != nil {
		return nil, err
	}
	cum := make([]int64, len(pl.names))
	var total int64
	for _, s := range w.Samples {
		v := s.Values[vi]
		total += max(v, -v)
		for _, k := range pl.holds[s.Stack] {
			cum[k] += v
		}
	}
	shares := make([]float64, len(cum))
	for k, c := range cum {
		shares[k] = profiles.Share(c, total)
	}
	return shares, nil
}

// sampleIndex is the index of the values of sampleType in samples of
// shape s ("" for the default), as profiles.SampleIndex picks it in their
// profiles.
func (s Shape) sampleIndex(sampleType string) (int, error) {
	p := &profile.Profile{DefaultSampleType: s.DefaultSampleType}
	for _, st := range s.SampleTypes {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: st.Type, Unit: st.Unit})
	}
	return profiles.SampleIndex(p, sampleType)
}
