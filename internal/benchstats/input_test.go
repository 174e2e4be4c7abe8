package benchstats

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestCompareCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inputs, err := ResolveAll(ctx, FileResolver{}, []string{"testdata/old.txt", "testdata/new.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compare(ctx, inputs, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled comparison: %v, want context.Canceled", err)
	}
}

func TestResolveAllLabels(t *testing.T) {
	inputs, err := ResolveAll(context.Background(), FileResolver{}, []string{"testdata/old.txt", "testdata/old.txt", "after=testdata/new.txt"})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, in := range inputs {
		labels = append(labels, in.Label)
	}
	if want := []string{"testdata/old.txt#0", "testdata/old.txt#1", "after"}; !slices.Equal(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
	if _, err := ResolveAll(context.Background(), FileResolver{}, []string{"testdata/missing.txt"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing file: %v, want ErrNotFound", err)
	}
}

// TestSpacingAndRenames compares inputs whose cpu lines differ only in
// padding and whose benchmark was renamed: one table, one row, compared.
func TestSpacingAndRenames(t *testing.T) {
	old := TextInput("old", "cpu: Example CPU   @ 3.00GHz\nBenchmarkParse-8 1 10 ns/op\nBenchmarkParse-8 1 11 ns/op\n")
	new := TextInput("new", "cpu: Example CPU @ 3.00GHz\nBenchmarkDecode-8 1 20 ns/op\nBenchmarkDecode-8 1 21 ns/op\n")
	cmp, err := Compare(context.Background(), []*Input{old, new}, Options{Renames: []Rename{{Old: "Parse", New: "Decode"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Tables) != 1 || len(cmp.Tables[0].Rows) != 1 {
		t.Fatalf("want one table of one row, got %+v", cmp.Tables)
	}
	tb := cmp.Tables[0]
	if got := tb.Config[0]; got.Value != "Example CPU   @ 3.00GHz" {
		t.Errorf("cpu %q, want the first spelling", got.Value)
	}
	r := tb.Rows[0]
	if r.Name != "Decode-8" || r.Cells[1] == nil || r.Cells[1].Change == nil {
		t.Errorf("row %q not paired across the rename: %+v", r.Name, r.Cells)
	}
}
