package escape

import (
	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
)

// ProfileLines returns the source lines of a profile's samples, weighted by
// the profile's default sample value (profiles.SampleIndex with no type:
// its DefaultSampleType, else the last type, as pprof does). Each sample
// counts once, at its user's line (profiles.UserFrame) where the user's
// code is the files inScope accepts, so time spent in the runtime or the
// standard library on behalf of a user's line counts for that line;
// Index.Compiled is the usual inScope. A nil inScope accepts every file:
// the innermost frame with a file gets the value.
// Samples with no frame in scope are left out.
func ProfileLines(p *profile.Profile, inScope func(file string) bool) []WeightedLine {
	vi, err := profiles.SampleIndex(p, "")
	if err != nil {
		return nil
	}
	inScopeClass := func(f profiles.Frame) profiles.Class {
		if f.File() == "" || f.Line() <= 0 || inScope != nil && !inScope(f.File()) {
			return profiles.Runtime
		}
		return profiles.User
	}
	type key struct {
		file string
		line int
	}
	sum := map[key]int64{}
	var order []key
	for _, s := range p.Sample {
		if s.Value[vi] == 0 {
			continue
		}
		fs := profiles.Frames(s)
		at := profiles.UserFrame(fs, -1, inScopeClass)
		if at < 0 {
			continue
		}
		k := key{fs[at].File(), int(fs[at].Line())}
		if _, seen := sum[k]; !seen {
			order = append(order, k)
		}
		sum[k] += s.Value[vi]
	}
	out := make([]WeightedLine, 0, len(order))
	for _, k := range order {
		out = append(out, WeightedLine{File: k.file, Line: k.line, Value: sum[k]})
	}
	return out
}

// SampleUnit returns the type and unit of the value ProfileLines weighs
// lines by, such as "cpu" and "nanoseconds".
func SampleUnit(p *profile.Profile) (typ, unit string) {
	i, err := profiles.SampleIndex(p, "")
	if err != nil {
		return "", ""
	}
	return p.SampleType[i].Type, p.SampleType[i].Unit
}
