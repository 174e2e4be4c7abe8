package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/perfscope/perfscope/internal/profdiff"
	"github.com/perfscope/perfscope/internal/units"
)

// WriteProfileDiffs renders profile diffs, the part of a comparison that
// says where the time or memory went, in format f: for each diff, its
// totals and the functions that changed most by flat and by cum value
// (Markdown lists them by flat only, to keep a PR comment short). In JSON
// the diffs travel inside the comparison they belong to.
func WriteProfileDiffs(w io.Writer, f Format, diffs []*profdiff.Diff) error {
	bw := bufio.NewWriter(w)
	for _, d := range diffs {
		_, unit, _ := strings.Cut(d.SampleType, "/")
		v := func(x int64) string { return units.Value(x, unit) }
		delta := func(x int64) string {
			if x > 0 {
				return "+" + v(x)
			}
			return v(x)
		}
		switch f {
		case Markdown:
			fmt.Fprintf(bw, "#### Where it changed (%s profile, %s)\n\nTotal %s → %s.\n\n", mdText(d.Kind), mdText(d.SampleType), v(d.BaseTotal), v(d.HeadTotal))
			t := &table{header: []string{"function", "flat Δ", "cum Δ"}, right: []bool{false, true, true}, code: []bool{true, false, false}}
			for _, fn := range d.ByFlat {
				t.add(fn.Function, delta(fn.Flat), delta(fn.Cum))
			}
			writeMarkdownTable(bw, t)
			bw.WriteString("\n")
		case Text:
			fmt.Fprintf(bw, "\nwhere it changed (%s profile, %s, head − base): total %s → %s\n", d.Kind, d.SampleType, v(d.BaseTotal), v(d.HeadTotal))
			for _, list := range []struct {
				title string
				fns   []profdiff.FunctionDelta
			}{{"by flat", d.ByFlat}, {"by cum", d.ByCum}} {
				if len(list.fns) == 0 {
					continue
				}
				t := &table{header: []string{list.title, "flat Δ", "cum Δ"}, right: []bool{false, true, true}}
				for _, fn := range list.fns {
					t.add(fn.Function, delta(fn.Flat), delta(fn.Cum))
				}
				writeTextTable(bw, t)
			}
			if len(d.ByFlat) == 0 && len(d.ByCum) == 0 {
				bw.WriteString("  no function changed\n")
			}
		default:
			return fmt.Errorf("unknown format %q", f)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write profile diffs: %w", err)
	}
	return nil
}
