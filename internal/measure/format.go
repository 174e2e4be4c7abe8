package measure

import (
	"fmt"
	"math"

	"golang.org/x/perf/benchunit"

	"github.com/perfscope/perfscope/internal/units"
)

// A value in a benchmark unit is written one of two ways, in the terminal
// and on the dashboard alike:
//
//   - In a table headed by its unit (comparisons, the gate, history), as
//     benchstat writes it: a number with an SI or binary prefix and no
//     unit, "1.500µ" under "sec/op", one prefix for the values of a row.
//     perfscope compare matches benchstat number for number.
//   - Standing alone (the latest value in a list, a chart's axis, a
//     sentence), in its quantity's own words: "1.5µs" for any time per
//     operation (sec/op, cpu-ns/op), "3 KiB" for bytes, "12 MiB/s" for
//     bytes per second, "2,522" for counts.
//
// Both round to the digits shown before choosing a prefix, so 999.9ns is
// "1µs" alone and "999.9n" in a table, never "1000ns".

// Format writes v, a value in unit, standing alone: durations and sizes
// with their units, other units as plain numbers. The unit's denominator
// ("/op") is left to the context, except for rates of bytes.
func Format(v float64, unit string) string {
	v, _ = benchunit.Tidy(v, unit)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return units.Number(v)
	}
	switch q, den := kind(unit); {
	case q == duration:
		return units.Seconds(v)
	case q == size && den == "s":
		return units.Bytes(v) + "/s"
	case q == size:
		return units.Bytes(v)
	}
	return units.Number(v)
}

// TableScale is the scale of a table row of values in unit, as benchstat
// chooses it: one prefix that shows every value with at least three
// significant digits. Values must be tidied (benchfmt.Reader tidies them).
func TableScale(unit string, values []float64) benchunit.Scaler {
	return benchunit.CommonScale(values, benchunit.ClassOf(unit))
}

// TableValue writes one value in unit on its own scale, as benchstat
// writes a geomean: "1.500µ".
func TableValue(v float64, unit string) string {
	return benchunit.Scale(v, benchunit.ClassOf(unit))
}

// FormatChange writes a relative change (see Change) with its sign:
// "+12.3%", "-4.5%", "0.0%"; a change from 0, which has no percentage,
// is "from 0".
func FormatChange(c float64) string {
	if s, ok := noPercent(c); ok {
		return s
	}
	if c > 0 {
		return "+" + units.Percent(c)
	}
	return units.Percent(c)
}

// TableChange writes a relative change in a table, as benchstat writes its
// deltas: "+12.34%"; a change from 0 is "from 0".
func TableChange(c float64) string {
	if s, ok := noPercent(c); ok {
		return s
	}
	return fmt.Sprintf("%+.2f%%", c*100)
}

// noPercent writes a change that no percentage can: "from 0" for an
// infinite one, "?" for NaN.
func noPercent(c float64) (string, bool) {
	switch {
	case math.IsInf(c, 0):
		return "from 0", true
	case math.IsNaN(c):
		return "?", true
	}
	return "", false
}
