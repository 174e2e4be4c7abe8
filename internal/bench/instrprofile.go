package bench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/fetch"
)

// An instruction profile is a benchmark's per-operation profiles (one per
// count, see OpProfile) kept as one pprof profile, so that they can be
// recorded and shown by pprof's own tools. Cachegrind counts instructions
// per function and source line, not per call stack: each sample is one
// line, with no callers, and its value is the exact number of
// instructions that line executed over its count's operations.
const (
	// instrSampleType is the profile's one sample type.
	instrSampleType = "instructions"
	// labelOperations is the numeric label that says how many
	// operations a sample's value counts: divided by it, the value is
	// per operation.
	labelOperations = "operations"
	// labelCount numbers the counts, from 1, when a benchmark was
	// counted more than once.
	labelCount = "count"
	// labelSource is the line's text where it was at hand.
	labelSource = "source"
	// otherFunctions names what the functions beyond the cap add up to.
	otherFunctions = "(other functions)"
)

// Caps of an instruction profile, so that what the store keeps per
// benchmark stays small whatever the benchmark runs. A benchmark's
// operation runs a few hundred distinct lines as a rule; beyond the caps,
// the lines that executed the fewest instructions are kept as their
// function's total (line 0), then the least busy functions as one
// "(other functions)": every count still adds up to its total.
const (
	maxProfileLines = 4000
	maxProfileFuncs = 1000
	// MaxInstructionProfileBytes bounds an encoded profile; the caps
	// above are halved until it fits.
	MaxInstructionProfileBytes = 1 << 20
)

// instrComments are the comments every instruction profile carries,
// which 'go tool pprof -comments' prints.
var instrComments = []string{
	"perfscope: instructions counted by valgrind's callgrind, exact, no sampling",
	"counted per function and source line, not per call stack: every sample is one line without callers",
}

// EncodeInstructionProfile writes the per-operation profiles of cb's
// counts as one gzipped pprof profile (see the comment on instrSampleType)
// within MaxInstructionProfileBytes; nil when no count has a profile.
func EncodeInstructionProfile(cb *CountedBenchmark) ([]byte, error) {
	var counts []InstructionCount
	for _, c := range cb.Counts {
		if c.Profile != nil && c.N > 0 {
			counts = append(counts, c)
		}
	}
	if len(counts) == 0 {
		return nil, nil
	}
	for lines, funcs := maxProfileLines, maxProfileFuncs; ; lines, funcs = lines/2, funcs/2 {
		b := newProfileBuilder()
		for i, c := range counts {
			b.addCount(i+1, c, lines, max(funcs, 1))
		}
		var buf bytes.Buffer
		if err := b.p.Write(&buf); err != nil {
			return nil, fmt.Errorf("encode instruction profile: %w", err)
		}
		if buf.Len() <= MaxInstructionProfileBytes || funcs <= 1 {
			if buf.Len() > MaxInstructionProfileBytes {
				return nil, fmt.Errorf("encode instruction profile: %d bytes even with one function per count", buf.Len())
			}
			return buf.Bytes(), nil
		}
	}
}

func newInstrProfile() *profile.Profile {
	return &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: instrSampleType, Unit: "count"}},
		DefaultSampleType: instrSampleType,
		PeriodType:        &profile.ValueType{Type: labelOperations, Unit: "count"},
		Comments:          slices.Clone(instrComments),
	}
}

// instrLine is one line of a count: exact instructions over the count's
// operations.
type instrLine struct {
	SourceLine
	source string
	value  int64
}

// addCount adds count number k of a benchmark, keeping at most lines
// lines and funcs functions.
func (b *profileBuilder) addCount(k int, c InstructionCount, lines, funcs int) {
	n := float64(c.N)
	var all []instrLine
	for l, v := range c.Profile.Lines {
		// v is the line's instructions over N operations divided by N:
		// times N it is that whole number again.
		all = append(all, instrLine{SourceLine: l, source: c.Profile.Source[l], value: int64(math.Round(v * n))})
	}
	// The busiest lines first, then by name, so that the same counts
	// give the same profile.
	busiest := func(a, b instrLine) int {
		if c := cmp.Compare(abs(b.value), abs(a.value)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Func, b.Func); c != 0 {
			return c
		}
		if c := cmp.Compare(a.File, b.File); c != 0 {
			return c
		}
		return cmp.Compare(a.Line, b.Line)
	}
	slices.SortFunc(all, busiest)
	if len(all) > lines {
		// The rest is kept as their functions' totals.
		rest := make(map[SourceLine]int64)
		for _, l := range all[lines:] {
			rest[SourceLine{Func: l.Func, File: l.File}] += l.value
		}
		all = all[:lines:lines]
		for l, v := range rest {
			all = append(all, instrLine{SourceLine: l, value: v})
		}
		slices.SortFunc(all, busiest)
	}
	byFunc := make(map[string]int64)
	for _, l := range all {
		byFunc[l.Func] += l.value
	}
	if len(byFunc) > funcs {
		names := make([]string, 0, len(byFunc))
		for fn := range byFunc {
			names = append(names, fn)
		}
		slices.SortFunc(names, func(a, b string) int {
			if c := cmp.Compare(abs(byFunc[b]), abs(byFunc[a])); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		keep := make(map[string]bool, funcs)
		for _, fn := range names[:funcs-1] {
			keep[fn] = true
		}
		var other int64
		kept := all[:0]
		for _, l := range all {
			if keep[l.Func] {
				kept = append(kept, l)
			} else {
				other += l.value
			}
		}
		all = append(kept, instrLine{SourceLine: SourceLine{Func: otherFunctions}, value: other})
	}
	if b.p.Period == 0 {
		b.p.Period = int64(c.N)
	}
	for _, l := range all {
		if l.value == 0 {
			continue
		}
		s := &profile.Sample{
			Location: []*profile.Location{b.location(l.SourceLine)},
			Value:    []int64{l.value},
			NumLabel: map[string][]int64{labelOperations: {int64(c.N)}, labelCount: {int64(k)}},
		}
		if l.source != "" {
			s.Label = map[string][]string{labelSource: {l.source}}
		}
		b.p.Sample = append(b.p.Sample, s)
	}
}

// A profileBuilder adds samples of source lines to a profile, each line
// and function once.
type profileBuilder struct {
	p     *profile.Profile
	locs  map[SourceLine]*profile.Location
	funcs map[[2]string]*profile.Function
}

func newProfileBuilder() *profileBuilder {
	return &profileBuilder{p: newInstrProfile(), locs: make(map[SourceLine]*profile.Location), funcs: make(map[[2]string]*profile.Function)}
}

// location returns the profile's location of l, adding it (and its
// function) on first use.
func (b *profileBuilder) location(l SourceLine) *profile.Location {
	if loc, ok := b.locs[l]; ok {
		return loc
	}
	fn := b.funcs[[2]string{l.Func, l.File}]
	if fn == nil {
		fn = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: l.Func, SystemName: l.Func, Filename: l.File}
		b.p.Function = append(b.p.Function, fn)
		b.funcs[[2]string{l.Func, l.File}] = fn
	}
	loc := &profile.Location{ID: uint64(len(b.p.Location) + 1), Line: []profile.Line{{Function: fn, Line: int64(l.Line)}}}
	b.p.Location = append(b.p.Location, loc)
	b.locs[l] = loc
	return loc
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// instrProfileLimits bound the reading of a recorded instruction profile:
// its caps with room to spare.
var instrProfileLimits = fetch.Limits{MaxBytes: 16 << 20, MaxSamples: 1 << 20, MaxLocations: 1 << 20}

// ParseInstructionProfile reads a profile EncodeInstructionProfile wrote,
// within bounds, and checks that it is one.
func ParseInstructionProfile(ctx context.Context, data []byte) (*profile.Profile, error) {
	p, _, err := fetch.Parse(ctx, bytes.NewReader(data), instrProfileLimits)
	if err != nil {
		return nil, fmt.Errorf("read instruction profile: %w", err)
	}
	if len(p.SampleType) != 1 || p.SampleType[0].Type != instrSampleType {
		return nil, errors.New("read instruction profile: not an instruction profile (its sample type is not instructions)")
	}
	return p, nil
}

// CountsOfProfile returns the counts an instruction profile holds, in
// order, each with its operations (N), its instructions per operation
// (PerOp, what its lines add up to) and its per-operation Profile, as
// CountInstructions made them; the counts' other fields are not kept.
func CountsOfProfile(p *profile.Profile) ([]InstructionCount, error) {
	type acc struct {
		n     int64
		total int64
		lines map[SourceLine]int64
		src   map[SourceLine]string
	}
	byCount := make(map[int64]*acc)
	for _, s := range p.Sample {
		if len(s.Location) != 1 || len(s.Location[0].Line) != 1 || len(s.Value) != 1 || s.Location[0].Line[0].Function == nil {
			return nil, errors.New("instruction profile: a sample that is not one source line")
		}
		ops, k := s.NumLabel[labelOperations], s.NumLabel[labelCount]
		if len(ops) != 1 || ops[0] <= 0 || len(k) != 1 {
			return nil, errors.New("instruction profile: a sample without its count and operations")
		}
		a := byCount[k[0]]
		if a == nil {
			a = &acc{n: ops[0], lines: make(map[SourceLine]int64), src: make(map[SourceLine]string)}
			byCount[k[0]] = a
		} else if a.n != ops[0] {
			return nil, fmt.Errorf("instruction profile: count %d counts %d and %d operations", k[0], a.n, ops[0])
		}
		ln := s.Location[0].Line[0]
		l := SourceLine{Func: ln.Function.Name, File: ln.Function.Filename, Line: int(ln.Line)}
		a.lines[l] += s.Value[0]
		a.total += s.Value[0]
		if src := s.Label[labelSource]; len(src) == 1 {
			a.src[l] = src[0]
		}
	}
	keys := slices.Sorted(maps.Keys(byCount))
	out := make([]InstructionCount, 0, len(keys))
	for _, k := range keys {
		a := byCount[k]
		per := float64(a.n)
		op := &OpProfile{Funcs: make(map[string]float64), Lines: make(map[SourceLine]float64), Source: a.src}
		byFunc := make(map[string]int64)
		for l, v := range a.lines {
			op.Lines[l] = float64(v) / per
			byFunc[l.Func] += v
		}
		for fn, v := range byFunc {
			op.Funcs[fn] = float64(v) / per
		}
		out = append(out, InstructionCount{N: int(a.n), PerOp: float64(a.total) / per, Profile: op, BytesPerOp: math.NaN()})
	}
	return out, nil
}

// PerOperation returns an instruction profile's instructions per
// operation, as its median count's (see MiddleCounts), for a flame graph: each line's
// value is rounded to whole instructions (the counts themselves are
// exact; CountsOfProfile has them unrounded).
func PerOperation(p *profile.Profile) (*profile.Profile, error) {
	counts, err := CountsOfProfile(p)
	if err != nil {
		return nil, err
	}
	b := newProfileBuilder()
	out := b.p
	out.PeriodType = nil
	out.Comments = append(out.Comments, "values are instructions per operation, each line's rounded to a whole instruction")
	middle := MiddleCounts(counts)
	mean := make(map[SourceLine]float64)
	for _, c := range middle {
		for l, v := range c.Profile.Lines {
			mean[l] += v / float64(len(middle))
		}
	}
	lines := make([]SourceLine, 0, len(mean))
	for l := range mean {
		lines = append(lines, l)
	}
	slices.SortFunc(lines, func(a, b SourceLine) int {
		return cmp.Or(cmp.Compare(a.Func, b.Func), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	for _, l := range lines {
		if v := int64(math.Round(mean[l])); v != 0 {
			out.Sample = append(out.Sample, &profile.Sample{Location: []*profile.Location{b.location(l)}, Value: []int64{v}})
		}
	}
	return out, nil
}
