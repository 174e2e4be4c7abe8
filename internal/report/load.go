package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/perfscope/perfscope/internal/units"

	"github.com/perfscope/perfscope/internal/loadgen"
)

// WriteLoad renders a load result in format f, as 'perfscope load' prints
// it; the run report shows the same lines. Its JSON form is the
// loadgen.Result object, whose fields README.md documents.
func WriteLoad(w io.Writer, f Format, r *loadgen.Result) error {
	if f == JSON {
		return writeJSON(w, r)
	}
	d := &doc{title: r.Method + " " + r.URL}
	if failed := LoadFailure(r); failed != "" {
		d.meta = []string{capitalize(failed)}
	}
	d.add(section{blocks: []block{{pairs: loadPairs(r)}}})
	return renderDoc(w, f, d)
}

// loadPairs lays out a load result: what ran, how much got through, how
// long it took, what went wrong.
func loadPairs(l *loadgen.Result) [][2]string {
	mode := fmt.Sprintf("closed loop, %d connections", l.Concurrency)
	if l.Mode == "open" {
		mode = fmt.Sprintf("open loop at %s req/s, up to %d in flight", units.Sig(l.Rate), l.Concurrency)
	}
	if !l.KeepAlive && l.Mode != "" {
		mode += ", a new connection per request"
	}
	pairs := [][2]string{
		{"requests", fmt.Sprintf("%s in %s (%s)", units.Thousands(l.Requests), units.Seconds(l.DurationSeconds), mode)},
		{"throughput", units.Rate(l.Throughput)},
	}
	if l.BytesRead > 0 || l.BytesWritten > 0 {
		pairs = append(pairs, [2]string{"transfer", units.Bytes(float64(l.BytesRead)) + " read, " + units.Bytes(float64(l.BytesWritten)) + " written"})
	}
	errs := "none"
	if l.Failures > 0 {
		errs = fmt.Sprintf("%s (%s)", units.Thousands(l.Failures), units.Percent(float64(l.Failures)/float64(max(l.Requests, 1))))
		// Most frequent first: the first kind is the one to look at.
		kinds := slices.SortedFunc(maps.Keys(l.Errors), func(a, b string) int {
			return cmp.Or(cmp.Compare(l.Errors[b], l.Errors[a]), strings.Compare(a, b))
		})
		var counts []string
		for _, k := range kinds {
			counts = append(counts, fmt.Sprintf("%s %s", k, units.Thousands(l.Errors[k])))
		}
		if len(counts) > 0 {
			errs += ": " + strings.Join(counts, ", ")
		}
	}
	pairs = append(pairs, [2]string{"errors", errs})
	// Failures answered by nothing have no latency worth showing.
	if lat := l.Latency; l.Requests > l.Failures || lat.Max > 0 {
		pairs = append(pairs, [2]string{"latency", fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (min %s, mean %s)",
			units.Millis(lat.P50), units.Millis(lat.P90), units.Millis(lat.P99), units.Millis(lat.P999), units.Millis(lat.Max), units.Millis(lat.Min), units.Millis(lat.Mean))})
	}
	if late := l.Late; late != nil {
		v := "none: every request left within 1ms of its time"
		if late.Count+late.Dropped > 0 {
			v = fmt.Sprintf("%s sent over 1ms late (worst %s), %s never sent: the generator could not keep the rate; raise -c, or the service is saturated",
				units.Thousands(late.Count), units.Millis(late.MaxLagMs), units.Thousands(late.Dropped))
		}
		pairs = append(pairs, [2]string{"late sends", v})
	}
	if l.Interrupted {
		pairs = append(pairs, [2]string{"interrupted", "the load was stopped early: the results are partial"})
	}
	return pairs
}
