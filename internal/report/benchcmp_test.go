package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/benchstats"
)

// benchComparison compares two real benchmark files of three samples
// each, thin enough for every kind of warning.
func benchComparison(t *testing.T) *benchstats.Comparison {
	t.Helper()
	ctx := context.Background()
	inputs, err := benchstats.ResolveAll(ctx, benchstats.FileResolver{}, []string{
		"before=../benchstats/testdata/small-old.txt", "after=../benchstats/testdata/small-new.txt",
	})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := benchstats.Compare(ctx, inputs, benchstats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cmp
}

func TestWriteBenchComparisonText(t *testing.T) {
	cmp := benchComparison(t)
	var b strings.Builder
	if err := WriteBenchComparison(&b, Text, cmp, nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"goos: linux\n", "pkg: example.com/benchmod/strs\n", "pkg: example.com/benchmod/sums\n",
		"before", "after", "sec/op", "median", "vs base", "geomean",
		"(p=0.700 n=3)", "¹ need >= 6 samples for confidence interval at level 0.95\n",
		"need >= 4 samples to detect a difference at alpha level 0.05\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	// One line per benchmark and unit: the Concat/n=4 row shows both
	// centers with their intervals, then the verdict.
	row := regexpLine(out, "Concat/n=4-2")
	if !strings.Contains(row, "403.2n") || !strings.Contains(row, "150.6n") || !strings.Contains(row, "~") {
		t.Errorf("Concat/n=4-2 row %q lacks centers or verdict", row)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, " ") && !strings.HasPrefix(l, "cpu:") {
			t.Errorf("line ends in a space: %q", l)
		}
	}
}

func regexpLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestWriteBenchJSONFields(t *testing.T) {
	cmp := benchComparison(t)
	var b bytes.Buffer
	if err := WriteBenchComparison(&b, JSON, cmp, nil); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["profile_diffs"]; ok {
		t.Error("profile_diffs present without diffs")
	}
	table := doc["tables"].([]any)[0].(map[string]any)
	keys := func(m map[string]any) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return k
	}
	want := map[string][]string{
		"table":   {"alpha", "center", "columns", "confidence", "config", "geomean", "rows", "unit"},
		"cell":    {"center", "hi", "lo", "n", "range", "values", "vs_base", "warnings"},
		"vs_base": {"delta", "n1", "n2", "p", "ratio", "significant", "warnings"},
	}
	cell := table["rows"].([]any)[0].(map[string]any)["cells"].([]any)[1].(map[string]any)
	got := map[string][]string{"table": keys(table), "cell": keys(cell), "vs_base": keys(cell["vs_base"].(map[string]any))}
	for k := range want {
		if !slices.Equal(got[k], want[k]) {
			t.Errorf("%s fields %v, want %v", k, got[k], want[k])
		}
	}
	if table["columns"].([]any)[0] != "before" || table["center"] != "median" {
		t.Errorf("columns %v, center %v", table["columns"], table["center"])
	}
}

func TestWriteBenchCSVAndMarkdown(t *testing.T) {
	cmp := benchComparison(t)
	var out, warnings, md strings.Builder
	if err := WriteBenchComparisonCSV(&out, &warnings, cmp); err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(strings.NewReader(out.String()))
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(records, func(rec []string) bool {
		return slices.Equal(rec, []string{"", "sec/op", "CI", "sec/op", "CI", "vs base", "P"})
	}) {
		t.Errorf("no unit row in\n%s", out.String())
	}
	// The first benchmark is on the CSV's line 7, after four
	// configuration lines, the labels and the units.
	if !strings.Contains(warnings.String(), "B7: need >= 6 samples for confidence interval at level 0.95") {
		t.Errorf("warnings not addressed by cell:\n%s", warnings.String())
	}
	if err := WriteBenchComparison(&md, Markdown, cmp, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| sec/op | before median | after median | vs base |\n|---|---:|---:|---:|\n") || !strings.Contains(md.String(), "¹ need &gt;= 6 samples") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// TestBenchTextLayout holds the text of real comparisons to the layout
// they were first written in, benchstat's, byte for byte: three inputs
// with footnotes, and two column fields under group headings.
func TestBenchTextLayout(t *testing.T) {
	const td = "../benchstats/testdata/"
	for _, tc := range []struct {
		golden string
		files  []string
		opts   benchstats.Options
	}{
		{"compare-three.txt", []string{td + "old.txt", td + "new.txt", td + "six.txt"}, benchstats.Options{}},
		{"compare-col-two-fields.txt", []string{td + "old.txt", td + "new.txt"}, benchstats.Options{Col: ".file,/n"}},
	} {
		inputs, err := benchstats.ResolveAll(context.Background(), benchstats.FileResolver{}, tc.files)
		if err != nil {
			t.Fatal(err)
		}
		cmp, err := benchstats.Compare(context.Background(), inputs, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteBenchComparison(&b, Text, cmp, nil); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", tc.golden))
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != string(want) {
			t.Errorf("%s: text differs from the layout held in testdata\n--- got\n%s\n--- want\n%s", tc.golden, b.String(), want)
		}
	}
}
