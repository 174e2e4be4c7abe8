package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/units"
)

// sourceSection lays out the per-line listings (pprof's list) of the
// hottest user functions, one table per function: each line's self, flat
// and cum values beside its source text.
func sourceSection(views []*profiles.SourceView) section {
	s := section{title: "Source"}
	for _, v := range views {
		for _, fn := range v.Functions {
			caption := fmt.Sprintf("%s: %s at %s — self %s (%s), cum %s (%s)",
				v.SampleType, fn.Function, location(fn.File, fn.StartLine),
				units.Value(fn.Self, v.Unit), units.Percent(fn.SelfShare), units.Value(fn.Cum, v.Unit), units.Percent(fn.CumShare))
			t := &table{
				header: []string{"line", "self", "flat", "cum", "source"},
				right:  []bool{true, true, true, true, false},
				code:   []bool{false, false, false, false, true},
			}
			for _, l := range fn.Lines {
				if l.Gap {
					t.add("…", "", "", "", "")
				}
				t.add(strconv.FormatInt(l.Line, 10), nonZero(l.Self, v.Unit), nonZero(l.Flat, v.Unit), nonZero(l.Cum, v.Unit),
					strings.ReplaceAll(l.Text, "\t", "    "))
			}
			b := block{caption: caption, table: t}
			if fn.Note != "" {
				b.lines = []string{fn.Note}
			}
			s.blocks = append(s.blocks, b)
		}
	}
	return s
}

// nonZero formats v, leaving lines without samples blank as pprof's list
// does ('.'), so the hot lines stand out.
func nonZero(v int64, unit string) string {
	if v == 0 {
		return "."
	}
	return units.Value(v, unit)
}
