package report

import (
	"io"
	"strings"

	"github.com/perfscope/perfscope/internal/profdiff"
	"github.com/perfscope/perfscope/internal/units"
)

// WriteProfileDiffs renders profile diffs, the part of a comparison that
// says where the time or memory went, in format f: for each diff, its
// totals and the functions that changed most by flat and by cum value
// (the list by cum folded away in Markdown, to keep a PR comment short).
// In JSON the diffs travel inside the comparison they belong to.
func WriteProfileDiffs(w io.Writer, f Format, diffs []*profdiff.Diff) error {
	d := &doc{}
	d.add(section{blocks: profileDiffBlocks(diffs)})
	return renderDoc(w, f, d)
}

// profileDiffBlocks lays out each diff: a caption with its totals, the
// functions by flat, then by cum.
func profileDiffBlocks(diffs []*profdiff.Diff) []block {
	var blocks []block
	for _, d := range diffs {
		_, unit, _ := strings.Cut(d.SampleType, "/")
		v := func(x int64) string { return units.Value(x, unit) }
		delta := func(x int64) string {
			if x > 0 {
				return "+" + v(x)
			}
			return v(x)
		}
		blocks = append(blocks, block{caption: "where it changed (" + d.Kind + " profile, " + d.SampleType + ", head − base): total " + v(d.BaseTotal) + " → " + v(d.HeadTotal)})
		if len(d.ByFlat) == 0 && len(d.ByCum) == 0 {
			blocks[len(blocks)-1].lines = []string{"no function changed"}
		}
		for _, list := range []struct {
			title  string
			fns    []profdiff.FunctionDelta
			folded bool
		}{{"by flat", d.ByFlat, false}, {"by cum", d.ByCum, true}} {
			if len(list.fns) == 0 {
				continue
			}
			t := &table{header: []string{"function", "flat Δ", "cum Δ"}, right: []bool{false, true, true}, code: []bool{true, false, false}}
			for _, fn := range list.fns {
				t.add(fn.Function, delta(fn.Flat), delta(fn.Cum))
			}
			blocks = append(blocks, block{caption: list.title, table: t, folded: list.folded})
		}
	}
	return blocks
}
