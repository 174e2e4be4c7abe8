package web

import (
	"context"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/store"
)

// TestCommitComparisonIsTheCLIs checks that the comparison page shows the
// table 'perfscope compare' prints, cell for cell, with its geomeans and
// footnotes: two real benchmark files of three samples each, thin enough
// for warnings.
func TestCommitComparisonIsTheCLIs(t *testing.T) {
	ctx := context.Background()
	inputs, err := benchstats.ResolveAll(ctx, benchstats.FileResolver{}, []string{
		"../../benchstats/testdata/small-old.txt", "../../benchstats/testdata/small-new.txt",
	})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := benchstats.Compare(ctx, inputs, benchstats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cc := NewCommitComparison(&store.CommitSamples{}, &store.CommitSamples{}, cmp)
	if len(cc.Tables) != len(cmp.Tables) {
		t.Fatalf("%d tables, want the comparison's %d", len(cc.Tables), len(cmp.Tables))
	}
	lines := strings.Split(cc.Text, "\n")
	for i, ct := range cc.Tables {
		if len(ct.Notes) == 0 {
			t.Errorf("%s: no footnotes; the CLI's table has them", ct.Unit)
		}
		for _, n := range ct.Notes {
			if !strings.Contains(cc.Text, n) {
				t.Errorf("%s: footnote %q is not the CLI's", ct.Unit, n)
			}
		}
		if n := len(cmp.Tables[i].Rows); n > 1 && (len(ct.Rows) != n+1 || ct.Rows[n].Cells[0].Parts[0].Text != "geomean") {
			t.Errorf("%s: %d rows; want the comparison's %d and a geomean", ct.Unit, len(ct.Rows), n)
		}
		for _, r := range ct.Rows {
			// The CLI prints the row with the same texts in order.
			var want []string
			for _, c := range r.Cells {
				for _, p := range c.Parts {
					want = append(want, p.Text)
				}
			}
			if !someLineHasInOrder(lines, want) {
				t.Errorf("%s: row %q is not a row of the CLI's table:\n%s", ct.Unit, want, cc.Text)
			}
		}
	}
}

// TestCommitComparisonColours checks that the rows of significant changes
// are coloured, and only they: real files with enough samples for a test.
func TestCommitComparisonColours(t *testing.T) {
	ctx := context.Background()
	inputs, err := benchstats.ResolveAll(ctx, benchstats.FileResolver{}, []string{
		"../../benchstats/testdata/old.txt", "../../benchstats/testdata/new.txt",
	})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := benchstats.Compare(ctx, inputs, benchstats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	coloured := 0
	for _, ct := range NewCommitComparison(&store.CommitSamples{}, &store.CommitSamples{}, cmp).Tables {
		for _, r := range ct.Rows {
			strong := false
			for _, c := range r.Cells {
				for _, p := range c.Parts {
					strong = strong || p.Strong
				}
			}
			if r.Class != "" {
				coloured++
			}
			if (r.Class != "") != strong {
				t.Errorf("%s %q: class %q, a significant change %v", ct.Unit, r.Cells[0].Parts[0].Text, r.Class, strong)
			}
		}
	}
	if coloured == 0 {
		t.Error("no row is coloured; the files differ significantly")
	}
}

// someLineHasInOrder reports whether a line holds every string of want, in
// order.
func someLineHasInOrder(lines, want []string) bool {
	for _, l := range lines {
		rest, ok := l, true
		for _, w := range want {
			i := strings.Index(rest, w)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(w):]
		}
		if ok {
			return true
		}
	}
	return false
}
