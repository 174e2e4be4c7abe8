package escape

import (
	"github.com/google/pprof/profile"
)

// ProfileLines returns the source lines of a profile's samples, weighted by
// the profile's default sample value (its DefaultSampleType, else the last
// type, as pprof does). Each sample counts once, at the innermost frame
// — inlined frames included — whose file inScope accepts, so time spent in
// the runtime or the standard library on behalf of a user's line counts for
// that line; Index.Compiled is the usual inScope. A nil inScope accepts
// every file: the leaf frame gets the value.
// Samples with no frame in scope are left out.
func ProfileLines(p *profile.Profile, inScope func(file string) bool) []WeightedLine {
	vi := defaultSampleIndex(p)
	if vi < 0 {
		return nil
	}
	type key struct {
		file string
		line int
	}
	sum := map[key]int64{}
	var order []key
	for _, s := range p.Sample {
		if vi >= len(s.Value) || s.Value[vi] == 0 {
			continue
		}
		k, ok := sampleLine(s, inScope)
		if !ok {
			continue
		}
		kk := key{k.Function.Filename, int(k.Line)}
		if _, seen := sum[kk]; !seen {
			order = append(order, kk)
		}
		sum[kk] += s.Value[vi]
	}
	out := make([]WeightedLine, 0, len(order))
	for _, k := range order {
		out = append(out, WeightedLine{File: k.file, Line: k.line, Value: sum[k]})
	}
	return out
}

// sampleLine returns the innermost frame of s in scope. A location's Line
// slice holds its inlined frames innermost first; Location[0] is the leaf.
func sampleLine(s *profile.Sample, inScope func(string) bool) (profile.Line, bool) {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function == nil || l.Function.Filename == "" || l.Line <= 0 {
				continue
			}
			if inScope == nil || inScope(l.Function.Filename) {
				return l, true
			}
		}
	}
	return profile.Line{}, false
}

// defaultSampleIndex is pprof's choice of the value to show by default.
func defaultSampleIndex(p *profile.Profile) int {
	if p.DefaultSampleType != "" {
		for i, st := range p.SampleType {
			if st.Type == p.DefaultSampleType {
				return i
			}
		}
	}
	return len(p.SampleType) - 1
}

// SampleUnit returns the type and unit of the value ProfileLines weighs
// lines by, such as "cpu" and "nanoseconds".
func SampleUnit(p *profile.Profile) (typ, unit string) {
	if i := defaultSampleIndex(p); i >= 0 {
		return p.SampleType[i].Type, p.SampleType[i].Unit
	}
	return "", ""
}
