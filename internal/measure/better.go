package measure

import (
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// Better returns +1 when higher values of unit are better, -1 when lower
// values are, and 0 when nothing says. In order: the unit's "better"
// metadata in meta (nil is none) or perfscope's own (instructions/op is
// lower); the units the testing package reports (sec/op, B/op, allocs/op
// lower, MB/s higher); then the quantity of the tidied unit: time or bytes
// per operation is a cost, lower is better; anything per second is a rate,
// higher is better. A custom unit such as "widgets/op" is 0: a change in it
// is a change, neither better nor worse.
func Better(unit string, meta benchfmt.UnitMetadataMap) int {
	switch lookup(unit, "better", meta) {
	case "higher":
		return 1
	case "lower":
		return -1
	case "":
	default:
		return 0
	}
	_, tidy := benchunit.Tidy(1, unit)
	if b := benchfmt.UnitMetadataMap(nil).GetBetter(tidy); b != 0 {
		return b
	}
	switch q, den := kind(unit); {
	case den == "s":
		return 1
	case den == "op" && (q == duration || q == size):
		return -1
	}
	return 0
}

// Improves returns +1 when the move from base to head is an improvement in
// unit, -1 when it is a regression, and 0 when the values are equal or the
// unit's better direction is unknown.
func Improves(unit string, meta benchfmt.UnitMetadataMap, base, head float64) int {
	b := Better(unit, meta)
	switch {
	case b == 0 || base == head:
		return 0
	case (head > base) == (b > 0):
		return 1
	}
	return -1
}
