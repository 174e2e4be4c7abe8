package measure

import (
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// Instructions is the unit of instruction counts per benchmark operation,
// which perfscope measures under valgrind.
const Instructions = "instructions/op"

// own is the metadata of the units perfscope itself measures, as it writes
// them beside their results.
var own = map[string][]benchfmt.UnitMetadata{
	Instructions: {
		{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: Instructions, Key: "assume"}, OrigUnit: Instructions, Value: "exact"},
		{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: Instructions, Key: "better"}, OrigUnit: Instructions, Value: "lower"},
	},
}

// Metadata returns the metadata perfscope gives a unit of its own: the
// lines to write with results in that unit, so that benchstat and every
// reader of the file treat them as perfscope does. It is nil for other
// units.
func Metadata(unit string) []*benchfmt.UnitMetadata {
	_, unit = benchunit.Tidy(1, unit)
	var out []*benchfmt.UnitMetadata
	for _, m := range own[unit] {
		out = append(out, &m)
	}
	return out
}

// lookup returns the value of a unit's metadata key: from meta when it
// holds the key for the unit, else from perfscope's own units, else "".
func lookup(unit, key string, meta benchfmt.UnitMetadataMap) string {
	if m := meta.Get(unit, key); m != nil {
		return m.Value
	}
	_, tidy := benchunit.Tidy(1, unit)
	if i := slices.IndexFunc(own[tidy], func(m benchfmt.UnitMetadata) bool { return m.Key == key }); i >= 0 {
		return own[tidy][i].Value
	}
	return ""
}

// A quantity is what the numerator of a tidied unit counts.
type quantity int

const (
	count    quantity = iota // anything else: a plain number
	duration                 // seconds: sec/op, cpu-sec/op
	size                     // bytes: B/op, peak-B/op, B/s
)

// kind splits a unit, tidied, into the quantity its numerator names and
// its denominator ("op", "s", or "" for none): "cpu-ns/op" is a duration
// per op, "MB/s" a size per second.
func kind(unit string) (quantity, string) {
	_, unit = benchunit.Tidy(1, unit)
	num, den, _ := strings.Cut(unit, "/")
	if i := strings.LastIndexByte(num, '-'); i >= 0 {
		num = num[i+1:]
	}
	switch num {
	case "sec":
		return duration, den
	case "B":
		return size, den
	}
	return count, den
}
