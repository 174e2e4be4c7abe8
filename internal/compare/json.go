package compare

import (
	"encoding/json"
	"io"
	"math"

	"github.com/perfscope/perfscope/internal/profdiff"
)

// The JSON form of a comparison. Field names are stable; see
// docs in WriteJSON.
type jsonComparison struct {
	Tables       []jsonTable      `json:"tables"`
	Warnings     []string         `json:"warnings,omitempty"`
	ProfileDiffs []*profdiff.Diff `json:"profile_diffs,omitempty"`
}

type jsonTable struct {
	Config     map[string]string `json:"config"`
	Unit       string            `json:"unit"`
	Center     string            `json:"center"`
	Alpha      float64           `json:"alpha"`
	Confidence float64           `json:"confidence"`
	Columns    []string          `json:"columns"`
	Rows       []jsonRow         `json:"rows"`
	Geomean    []jsonGeomean     `json:"geomean"`
}

type jsonRow struct {
	Name  string      `json:"name"`
	Cells []*jsonCell `json:"cells"`
}

type jsonCell struct {
	Center   *float64    `json:"center"`
	Lo       *float64    `json:"lo"`
	Hi       *float64    `json:"hi"`
	Range    string      `json:"range"`
	N        int         `json:"n"`
	Values   []*float64  `json:"values"`
	Warnings []string    `json:"warnings,omitempty"`
	VsBase   *jsonVsBase `json:"vs_base,omitempty"`
}

type jsonVsBase struct {
	Delta       string   `json:"delta"`
	Ratio       *float64 `json:"ratio"`
	P           float64  `json:"p"`
	N1          int      `json:"n1"`
	N2          int      `json:"n2"`
	Significant bool     `json:"significant"`
	Warnings    []string `json:"warnings,omitempty"`
}

type jsonGeomean struct {
	Center   *float64 `json:"center"`
	Delta    string   `json:"delta,omitempty"`
	Ratio    *float64 `json:"ratio,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// WriteJSON writes the comparison as one JSON object:
//
//	tables[]: config (file keys such as goos, pkg), unit ("sec/op"),
//	  center ("median"), alpha, confidence, columns (labels),
//	  rows[]: name, cells[] (null where a column lacks the benchmark):
//	    center, lo, hi (null when not finite), range ("1%"), n, values,
//	    warnings, vs_base {delta ("~" or "+3.10%"), ratio, p, n1, n2,
//	    significant, warnings}
//	  geomean[]: center, delta, ratio, warnings
//	warnings[]: skipped lines and filter messages
//	profile_diffs[]: see profdiff.Diff
func WriteJSON(w io.Writer, cmp *Comparison, diffs []*profdiff.Diff) error {
	out := jsonComparison{Tables: []jsonTable{}, Warnings: errStrings(cmp.Warnings), ProfileDiffs: diffs}
	for _, t := range cmp.Tables {
		jt := jsonTable{
			Config: make(map[string]string), Unit: t.Unit, Center: t.Assumption.SummaryLabel(),
			Alpha: t.Alpha, Confidence: t.Confidence, Rows: []jsonRow{},
		}
		for _, kv := range t.Config() {
			jt.Config[kv[0]] = kv[1]
		}
		for i := range t.Cols {
			jt.Columns = append(jt.Columns, t.ColumnLabel(i))
		}
		for r := range t.Rows {
			jr := jsonRow{Name: t.RowLabel(r)}
			for c := range t.Cols {
				jr.Cells = append(jr.Cells, jsonCellOf(t.Cell(r, c)))
			}
			jt.Rows = append(jt.Rows, jr)
		}
		for i, g := range t.Geomeans {
			jg := jsonGeomean{Warnings: errStrings(g.Warnings)}
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
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func jsonCellOf(c *Cell) *jsonCell {
	if c == nil {
		return nil
	}
	cellWarn, cmpWarn := c.Warnings()
	jc := &jsonCell{
		Center: finite(c.Summary.Center), Lo: finite(c.Summary.Lo), Hi: finite(c.Summary.Hi),
		Range: c.Summary.PctRangeString(), N: len(c.Values), Values: finites(c.Values),
		Warnings: errStrings(cellWarn),
	}
	if c.Baseline != nil {
		v := &jsonVsBase{
			Delta: c.Delta(), P: c.Comparison.P, N1: c.Comparison.N1, N2: c.Comparison.N2,
			Significant: c.Significant(), Warnings: errStrings(cmpWarn),
		}
		if b := c.Baseline.Summary.Center; b != 0 {
			v.Ratio = finite(c.Summary.Center / b)
		}
		jc.VsBase = v
	}
	return jc
}

// finites maps finite to a slice.
func finites(xs []float64) []*float64 {
	out := make([]*float64, len(xs))
	for i, x := range xs {
		out[i] = finite(x)
	}
	return out
}

// finite returns nil for values JSON cannot carry (±Inf, NaN).
func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

func errStrings(errs []error) []string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return s
}
