package measure

import (
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// Exact reports whether unit is measured exactly: its "assume" metadata
// in meta (nil is none) says "exact", or, without such a line, the unit
// is one perfscope measures exactly (instructions/op: counts of the same
// code repeat whatever the machine's load). An exact unit's samples need
// no test: any difference between them is the code's.
func Exact(unit string, meta benchfmt.UnitMetadataMap) bool {
	return lookup(unit, "assume", meta) == "exact"
}

// Assumption is the distributional assumption benchmath makes about
// unit's values: exact for an exact unit, none otherwise, as benchstat
// reads the "assume" metadata.
func Assumption(unit string, meta benchfmt.UnitMetadataMap) benchmath.Assumption {
	if Exact(unit, meta) {
		return benchmath.AssumeExact
	}
	return benchmath.AssumeNothing
}
