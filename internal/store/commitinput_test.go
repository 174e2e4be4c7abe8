package store

import (
	"context"
	"testing"

	"github.com/perfscope/perfscope/internal/benchstats"
)

// TestCommitInputKeepsUnitsAndConfig compares two stored commits as
// 'perfscope compare' and the dashboard both read them: instruction counts
// stay exact, so a 2,522 → 20,413 step is a change and not "~ (p=1.000)",
// and the configuration lines head the table as a file's would.
func TestCommitInputKeepsUnitsAndConfig(t *testing.T) {
	commit := func(instr float64, ns []float64) *CommitSamples {
		return &CommitSamples{
			Config: []ConfigValue{{Key: "goos", Value: "linux"}, {Key: "cpu", Value: "Intel(R) Xeon(R) Processor"}},
			Samples: []SeriesSamples{
				{SeriesKey: SeriesKey{Package: "example.com/leftpad", Name: "Leftpad/optimized-2", Unit: "instructions/op"}, Values: []float64{instr}},
				{SeriesKey: SeriesKey{Package: "example.com/leftpad", Name: "Leftpad/optimized-2", Unit: "sec/op"}, Values: ns},
			},
		}
	}
	base, head := CommitInput(commit(2522, []float64{1.44e-6, 1.45e-6, 1.43e-6})), CommitInput(commit(20413, []float64{3.97e-6, 3.95e-6, 3.99e-6}))
	base.Label, head.Label = "base", "head"
	cmp, err := benchstats.Compare(context.Background(), []*benchstats.Input{base, head}, benchstats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tb := range cmp.Tables {
		config := make(map[string]string)
		for _, kv := range tb.Config {
			config[kv.Key] = kv.Value
		}
		if config["goos"] != "linux" || config["cpu"] != "Intel(R) Xeon(R) Processor" || config["pkg"] != "example.com/leftpad" {
			t.Errorf("%s table's configuration %v lost the commits' lines", tb.Unit, tb.Config)
		}
		if tb.Unit != "instructions/op" {
			continue
		}
		found = true
		if tb.Center != "exact" {
			t.Errorf("instructions/op summarized by %s, want exact", tb.Center)
		}
		ch := tb.Rows[0].Cells[1].Change
		if ch == nil || !ch.Significant || ch.Delta != "+709.40%" {
			t.Errorf("instructions/op 2,522 → 20,413: change %+v, want +709.40%% and significant", ch)
		}
	}
	if !found {
		t.Fatal("no instructions/op table")
	}
}
