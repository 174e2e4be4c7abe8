package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/perfscope/perfscope/internal/analysis"
	"github.com/perfscope/perfscope/internal/units"
)

// metricLabels names the comparison's metrics for people; an unknown
// metric shows its key.
func metricLabel(name string) string {
	switch name {
	case "throughput_rps":
		return "throughput"
	case "p50_ms":
		return "p50 latency"
	case "p99_ms":
		return "p99 latency"
	case "p999_ms":
		return "p99.9 latency"
	case "errors":
		return "failed requests"
	case "alloc_objects_per_request":
		return "allocations per request"
	case "alloc_bytes_per_request":
		return "bytes allocated per request"
	case "cpu_seconds_per_request":
		return "CPU per request"
	case "gc_fraction":
		return "GC share of CPU"
	case "allocator_fraction":
		return "allocator share of CPU"
	}
	return name
}

// comparisonDoc lays out two analyses side by side.
func comparisonDoc(c *analysis.SideBySide) *doc {
	d := &doc{title: fmt.Sprintf("perfscope comparison: %s vs %s", c.Base.Name, c.Head.Name)}
	for _, s := range []analysis.Side{c.Base, c.Head} {
		if s.RunID != "" {
			d.meta = append(d.meta, fmt.Sprintf("%s: run %s, target %s", s.Name, s.RunID, s.Target))
		}
	}
	tb := &table{
		header: []string{"metric", c.Base.Name, c.Head.Name, "change", ""},
		right:  []bool{false, true, true, true, false},
		code:   make([]bool, 5),
	}
	for _, r := range SideBySideRows(c) {
		tb.add(r.Label, r.Base, r.Head, r.Change, r.Verdict)
	}
	d.add(section{title: "Side by side", blocks: []block{
		{table: tb},
		{lines: []string{"One run each: a direction, not a significance test (benchmark both with perfscope bench and perfscope compare for that)."}},
	}})
	return d
}

// A SideBySideRow is one metric of a SideBySide as people read it.
type SideBySideRow struct {
	Metric             string // the metric's key
	Label              string
	Base, Head, Change string
	Verdict            string // "better", "worse", "same" or ""
	// Share says the metric is a share of CPU, whose change is written
	// in percentage points; Ratio is every other metric's head ÷ base
	// ("1.03×"), "" when it is not known. A table whose one column mixes
	// "+3.0%", "4.43×" and "+1.2 pts" reads badly: the dashboard shows
	// ratios and points in separate tables.
	Share bool
	Ratio string
}

// SideBySideRows lays out c's metrics as WriteSideBySide prints them, for
// the dashboard's table.
func SideBySideRows(c *analysis.SideBySide) []SideBySideRow {
	rows := make([]SideBySideRow, 0, len(c.Metrics))
	for _, m := range c.Metrics {
		rows = append(rows, SideBySideRow{Metric: m.Name, Label: metricLabel(m.Name), Base: metricValue(m.Base, m.Unit),
			Head: metricValue(m.Head, m.Unit), Change: change(m), Verdict: m.Verdict, Share: m.Unit == "fraction"})
		if r := &rows[len(rows)-1]; !r.Share && m.Ratio != nil {
			r.Ratio = ratio(*m.Ratio)
		}
	}
	return rows
}

func metricValue(v *float64, unit string) string {
	if v == nil {
		return "-"
	}
	switch unit {
	case "req/s":
		return units.Rate(*v)
	case "ms":
		return units.Millis(*v)
	case "seconds":
		return units.Seconds(*v)
	case "bytes":
		return units.Bytes(*v)
	case "fraction":
		return units.Percent(*v)
	default:
		return units.Count(*v)
	}
}

// change is the relative change, or for fractions the difference in
// percentage points, which reads better than a ratio of percentages.
func change(m analysis.Metric) string {
	if m.Base == nil || m.Head == nil {
		return ""
	}
	if m.Unit == "fraction" {
		return units.Points(*m.Head - *m.Base)
	}
	if m.Ratio == nil {
		if *m.Head == 0 {
			return "0%"
		}
		return "new"
	}
	r := *m.Ratio
	if r >= 2 || (r > 0 && r <= 0.5) {
		return ratio(r)
	}
	p := (r - 1) * 100
	if math.Abs(p) < 0.05 {
		return "0%"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

// ratio writes head ÷ base: "4.43×", "0.97×", and a tiny ratio with two
// significant digits ("0.0025×"), never as "0×" nor in e-notation.
func ratio(r float64) string {
	if r > 0 && r < 0.01 {
		return strconv.FormatFloat(r, 'f', 1-int(math.Floor(math.Log10(r))), 64) + "×"
	}
	return units.Sig(r) + "×"
}
