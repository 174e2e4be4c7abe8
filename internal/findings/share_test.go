package findings

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

// TestSharesMatchTables diagnoses a run captured by `perfscope profile`
// from the naive leftpad example, whose profiles hold the profiler's own
// work, and checks that findings and the report's tables agree: each
// measure of a finding is a share of the same total as the table of its
// resource, and a line charged the same value shows the same share in
// both (the concatenation in main.leftpad among them).
func TestSharesMatchTables(t *testing.T) {
	saved, err := run.Load(filepath.Join("..", "profiles", "testdata", "leftpad-run"))
	if err != nil {
		t.Fatal(err)
	}
	a, errs := profiles.Analyze(profiles.ReadRun(saved), profiles.Options{Top: 1000})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	fs, _ := Diagnose(a, nil, Options{SourceDir: filepath.Join("..", "..", "examples", "leftpad")})
	if len(fs) == 0 {
		t.Fatal("no findings on the naive leftpad run")
	}
	type table struct {
		total int64
		row   func(profiles.Site) (int64, float64)
		rows  []profiles.Site
	}
	count := func(s profiles.Site) (int64, float64) { return s.Count, s.CountShare }
	amount := func(s profiles.Site) (int64, float64) { return s.Amount, s.AmountShare }
	tables := map[Resource]table{
		CPU:          {a.CPU.Lines.TotalAmount, amount, a.CPU.Lines.Rows},
		AllocObjects: {a.Allocs.ByObjects.TotalCount, count, a.Allocs.ByObjects.Rows},
		AllocBytes:   {a.Allocs.ByBytes.TotalAmount, amount, a.Allocs.ByBytes.Rows},
	}
	same, concat := 0, false
	for _, f := range fs {
		for _, ev := range f.Evidence {
			for _, m := range ev.Measures {
				tb, ok := tables[m.Resource]
				if !ok || m.Value == 0 {
					continue
				}
				if total := float64(m.Value) / m.Share; math.Abs(total-float64(tb.total)) > 1e-6*float64(tb.total) {
					t.Errorf("%s: %s at %s is %d, %.4f%% of %.0f; the table's total is %d",
						f.Rule, m.Resource, ev.Where(), m.Value, 100*m.Share, total, tb.total)
				}
				for _, r := range tb.rows {
					if r.Function != ev.Function || r.File != ev.File || r.Line != ev.Line {
						continue
					}
					if v, share := tb.row(r); v == m.Value {
						same++
						if share != m.Share {
							t.Errorf("%s: %s at %s: the finding says %v, the table %v", f.Rule, m.Resource, ev.Where(), m.Share, share)
						}
						concat = concat || f.Rule == "concat-loop" && ev.Function == "main.leftpad" && m.Resource == AllocObjects
					}
				}
			}
		}
	}
	if !concat {
		t.Error("the concat-loop finding in main.leftpad charges its line other objects than the table does")
	}
	if same == 0 {
		t.Error("no line of a finding has a table row with the same value")
	}
}
