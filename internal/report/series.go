package report

import (
	"io"
	"strconv"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/store"
	"github.com/perfscope/perfscope/internal/units"
)

// seriesTime is how the series pages and commands write an instant.
func seriesTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

// WriteProfileTargets lists stored profile series: labels, type, the time
// they span, scrapes and bytes stored.
func WriteProfileTargets(w io.Writer, f Format, ts []store.ProfileTarget) error {
	if f == JSON {
		if ts == nil {
			ts = []store.ProfileTarget{}
		}
		return writeJSON(w, ts)
	}
	t := &table{header: []string{"SERIES", "TYPE", "FIRST", "LAST", "SCRAPES", "STORED"}, right: []bool{false, false, false, false, true, true}}
	for _, s := range ts {
		t.add(s.Labels.String(), s.Type, seriesTime(s.First), seriesTime(s.Last), strconv.FormatInt(s.Scrapes, 10), units.Value(s.Bytes, "bytes"))
	}
	b := block{table: t}
	if len(ts) == 0 {
		b = block{lines: []string{"no profile series stored: run 'perfscope scrape --config FILE' against this --db first"}}
	}
	d := &doc{}
	d.add(section{blocks: []block{b}})
	return renderDoc(w, f, d)
}

// WriteSeriesTop renders the top functions of a merged range.
func WriteSeriesTop(w io.Writer, f Format, q profseries.Query, t *profiles.FuncTable) error {
	if f == JSON {
		return writeJSON(w, t)
	}
	d := &doc{title: q.Type + " " + q.Selector.String(), meta: []string{rangeText(q.From, q.To) + "; " + t.SampleType + " total " + units.Value(t.Total, t.Unit)}}
	d.add(section{blocks: []block{funcBlock("Functions by "+string(t.Order)+" "+t.SampleType, t)}})
	return renderDoc(w, f, d)
}

// rangeText writes a time range.
func rangeText(from, to time.Time) string { return seriesTime(from) + " to " + seriesTime(to) }

// WriteFunctionSeries renders one function's share per step.
func WriteFunctionSeries(w io.Writer, f Format, q profseries.Query, function string, pts []profseries.FunctionPoint) error {
	if f == JSON {
		if pts == nil {
			pts = []profseries.FunctionPoint{}
		}
		return writeJSON(w, struct {
			Function string                     `json:"function"`
			Points   []profseries.FunctionPoint `json:"points"`
		}{function, pts})
	}
	t := &table{header: []string{"FROM", "flat%", "cum%", "SCRAPES"}, right: []bool{false, true, true, true}}
	for _, p := range pts {
		t.add(seriesTime(p.Start), units.Percent(p.FlatShare), units.Percent(p.CumShare), strconv.Itoa(p.Scrapes))
	}
	b := block{caption: function + ", share of " + q.Type + " per step", table: t}
	if len(pts) == 0 {
		b = block{lines: []string{"no scrape in the range holds " + function}}
	}
	d := &doc{title: q.Type + " " + q.Selector.String(), meta: []string{rangeText(q.From, q.To)}}
	d.add(section{blocks: []block{b}})
	return renderDoc(w, f, d)
}

// WriteRangeDiff renders how one range's profile differs from another's,
// in shares of each range's total, n functions at most (0: all).
func WriteRangeDiff(w io.Writer, f Format, base, head profseries.Query, d *profseries.RangeDiff, n int) error {
	if f == JSON {
		return writeJSON(w, d)
	}
	t := &table{header: []string{"flat%", "", "cum%", "", "function"}, right: []bool{true, true, true, true, false}, code: []bool{false, false, false, false, true}}
	for i, fd := range d.Functions {
		if n > 0 && i == n {
			break
		}
		t.add(units.Percent(fd.BaseFlat)+" → "+units.Percent(fd.HeadFlat), units.Points(fd.Flat),
			units.Percent(fd.BaseCum)+" → "+units.Percent(fd.HeadCum), units.Points(fd.Cum), fd.Function)
	}
	caption := "Functions by change of flat share, base → head"
	if n > 0 && len(d.Functions) > n {
		caption += " (" + strconv.Itoa(len(d.Functions)-n) + " more not shown)"
	}
	doc := &doc{title: head.Type + " " + head.Selector.String(), meta: []string{
		"base " + rangeText(base.From, base.To) + ": " + d.SampleType + " total " + units.Value(d.BaseTotal, d.Unit),
		"head " + rangeText(head.From, head.To) + ": " + d.SampleType + " total " + units.Value(d.HeadTotal, d.Unit),
		"shares are of each range's own total, so ranges of different length or load compare",
	}}
	doc.add(section{blocks: []block{{caption: caption, table: t}}})
	return renderDoc(w, f, doc)
}

// WriteMerged says what a merged profile written to path holds.
func WriteMerged(w io.Writer, path string, q profseries.Query, p *profile.Profile, restarted [][]profseries.TargetProcess) error {
	d := &doc{}
	lines := []string{
		"wrote " + path + ": " + q.Type + " " + q.Selector.String() + ", " + rangeText(q.From, q.To) + ", " +
			strconv.Itoa(len(p.Sample)) + " stacks over " + units.Seconds(time.Duration(p.DurationNanos).Seconds()) + " of profiles",
	}
	for _, ps := range restarted {
		lines = append(lines, "note: "+profseries.ProcessNote(ps))
	}
	lines = append(lines, "open it with: go tool pprof "+path)
	d.add(section{blocks: []block{{lines: lines}}})
	return renderDoc(w, Text, d)
}

// WriteWatchNext lists the queries to run next on the store db the watch
// demo filled over [from, to), for the series selector: the diff compares
// the range's second half with its first.
func WriteWatchNext(w io.Writer, db, selector string, from, to time.Time) error {
	sel := "'" + selector + "'"
	half := to.Sub(from) / 2
	mid := from.Add(half)
	d := &doc{}
	d.add(section{title: "Ask the store more", blocks: []block{{code: []string{
		"perfscope query targets --db " + db,
		"perfscope query top --db " + db + " --since 1h --type allocs " + sel,
		"perfscope query merge --db " + db + " --since 1h -o cpu.pb.gz " + sel,
		"perfscope query diff --db " + db + " --from '" + mid.Format(time.DateTime) + "' --to '" + to.Format(time.DateTime) + "' --ago " + half.Round(time.Second).String() + " " + sel,
		"perfscope query findings --db " + db + " --since 1h " + sel,
	}}}})
	return renderDoc(w, Text, d)
}
