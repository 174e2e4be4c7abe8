package report

import (
	"encoding/json"
	"io"

	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/gate"
	"github.com/perfscope/perfscope/internal/profdiff"
)

// The JSON form of a benchmark comparison. Field names are stable and
// documented at writeBenchJSON and in the README. It is written from the
// comparison itself, not through the document layout that text and
// Markdown share: a program reads these values at full precision, and a
// layout for people (rounded, scaled, footnoted) would lose them.
type benchJSON struct {
	Tables       []benchTableJSON `json:"tables"`
	Warnings     []string         `json:"warnings,omitempty"`
	ProfileDiffs []*profdiff.Diff `json:"profile_diffs,omitempty"`
	// InstructionChanges are the benchmarks whose instructions/op moved
	// beyond the threshold between two recorded commits, each with
	// where it changed (see WriteCommitComparison).
	InstructionChanges []gate.RecordedChange `json:"instruction_changes,omitempty"`
}

type benchTableJSON struct {
	Config     map[string]string  `json:"config"`
	Unit       string             `json:"unit"`
	Center     string             `json:"center"`
	Alpha      float64            `json:"alpha"`
	Confidence float64            `json:"confidence"`
	Columns    []string           `json:"columns"`
	Rows       []benchRowJSON     `json:"rows"`
	Geomean    []benchGeomeanJSON `json:"geomean"`
}

type benchRowJSON struct {
	Name  string           `json:"name"`
	Cells []*benchCellJSON `json:"cells"`
}

type benchCellJSON struct {
	Center   *float64         `json:"center"`
	Lo       *float64         `json:"lo"`
	Hi       *float64         `json:"hi"`
	Range    string           `json:"range"`
	N        int              `json:"n"`
	Values   []*float64       `json:"values"`
	Warnings []string         `json:"warnings,omitempty"`
	VsBase   *benchChangeJSON `json:"vs_base,omitempty"`
}

type benchChangeJSON struct {
	Delta       string   `json:"delta"`
	Ratio       *float64 `json:"ratio"`
	P           float64  `json:"p"`
	N1          int      `json:"n1"`
	N2          int      `json:"n2"`
	Significant bool     `json:"significant"`
	Warnings    []string `json:"warnings,omitempty"`
}

type benchGeomeanJSON struct {
	Center   *float64 `json:"center"`
	Delta    string   `json:"delta,omitempty"`
	Ratio    *float64 `json:"ratio,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// writeBenchJSON writes a benchmark comparison as one JSON object:
//
//	tables[]: config (file keys such as goos, pkg), unit ("sec/op"),
//	  center ("median"), alpha, confidence, columns (labels),
//	  rows[]: name, cells[] (null where a column lacks the benchmark):
//	    center, lo, hi (null when not finite), range ("1%"), n, values,
//	    warnings, vs_base {delta ("~" or "+3.10%"), ratio, p, n1, n2,
//	    significant, warnings}
//	  geomean[]: center, delta, ratio, warnings
//	warnings[]: skipped lines and filter messages
//	profile_diffs[]: see profdiff.Diff; left out when there are none
func writeBenchJSON(w io.Writer, cmp *benchstats.Comparison, profileDiffs []*profdiff.Diff) error {
	return encodeBenchJSON(w, benchJSONOf(cmp, profileDiffs))
}

func encodeBenchJSON(w io.Writer, out benchJSON) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func benchJSONOf(cmp *benchstats.Comparison, profileDiffs []*profdiff.Diff) benchJSON {
	out := benchJSON{Tables: []benchTableJSON{}, Warnings: errorTexts(cmp.Warnings), ProfileDiffs: profileDiffs}
	for _, t := range cmp.Tables {
		jt := benchTableJSON{
			Config: make(map[string]string), Unit: t.Unit, Center: t.Center,
			Alpha: t.Alpha, Confidence: t.Confidence, Rows: []benchRowJSON{},
		}
		for _, kv := range t.Config {
			jt.Config[kv.Key] = kv.Value
		}
		for _, c := range t.Columns {
			jt.Columns = append(jt.Columns, c.Label)
		}
		for _, r := range t.Rows {
			jr := benchRowJSON{Name: r.Name}
			for _, c := range r.Cells {
				jr.Cells = append(jr.Cells, benchCellOf(c))
			}
			jt.Rows = append(jt.Rows, jr)
		}
		for i, g := range t.Geomeans {
			jg := benchGeomeanJSON{Warnings: errorTexts(g.Warnings)}
			if g.HasCenter {
				jg.Center = finite(g.Center)
			}
			if i > 0 {
				jg.Delta = geomeanDelta(g)
				if g.HasRatio {
					jg.Ratio = finite(g.Ratio)
				}
			}
			jt.Geomean = append(jt.Geomean, jg)
		}
		out.Tables = append(out.Tables, jt)
	}
	return out
}

func benchCellOf(c *benchstats.Cell) *benchCellJSON {
	if c == nil {
		return nil
	}
	jc := &benchCellJSON{
		Center: finite(c.Summary.Center), Lo: finite(c.Summary.Lo), Hi: finite(c.Summary.Hi),
		Range: c.Summary.PctRangeString(), N: len(c.Values), Values: finites(c.Values),
		Warnings: errorTexts(c.Warnings),
	}
	if ch := c.Change; ch != nil {
		jc.VsBase = &benchChangeJSON{
			Delta: ch.Delta, Ratio: finite(ch.Ratio), P: ch.Test.P, N1: ch.Test.N1, N2: ch.Test.N2,
			Significant: ch.Significant, Warnings: errorTexts(ch.Test.Warnings),
		}
	}
	return jc
}
