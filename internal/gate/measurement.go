package gate

import (
	"fmt"

	"golang.org/x/perf/benchfmt"
)

// A Measurement is one benchmark metric measured on both sides of a gate:
// the base's and the head's samples, paired by package, name and unit.
type Measurement struct {
	Package   string    `json:"package"`
	Benchmark string    `json:"benchmark"` // full name without "Benchmark", as benchstat shows it
	Unit      string    `json:"unit"`      // tidied: sec/op, B/op, allocs/op
	Base      []float64 `json:"base"`
	Head      []float64 `json:"head"`
}

// Pair groups base and head results into Measurements, in the order the
// head's results first appear. Benchmarks on one side only are returned
// with an empty sample on the other.
func Pair(base, head []*benchfmt.Result) []Measurement {
	type key struct{ pkg, name, unit string }
	idx := make(map[key]int)
	var ms []Measurement
	add := func(results []*benchfmt.Result, isBase bool) {
		for _, r := range results {
			for _, v := range r.Values {
				k := key{r.GetConfig("pkg"), r.Name.String(), v.Unit}
				i, ok := idx[k]
				if !ok {
					i = len(ms)
					idx[k] = i
					ms = append(ms, Measurement{Package: k.pkg, Benchmark: k.name, Unit: k.unit})
				}
				if isBase {
					ms[i].Base = append(ms[i].Base, v.Value)
				} else {
					ms[i].Head = append(ms[i].Head, v.Value)
				}
			}
		}
	}
	add(head, false)
	add(base, true)
	return ms
}

// String names a measurement the way people read it.
func (m Measurement) String() string {
	return fmt.Sprintf("%s Benchmark%s %s", m.Package, m.Benchmark, m.Unit)
}
