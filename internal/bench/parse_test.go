package bench

import (
	"strings"
	"testing"
)

func TestResultsBenchmarks(t *testing.T) {
	text := `pkg: example.com/a
BenchmarkParse-8   100  120 ns/op
BenchmarkParse-8   100  121 ns/op
BenchmarkParse/size=10-8   100  90 ns/op
pkg: example.com/b
BenchmarkParse-8   100  300 ns/op
not a result line
`
	r, err := Parse(strings.NewReader(text), "results.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 4 {
		t.Fatalf("%d results, want 4", len(r.Results))
	}
	// Parse twice in a, Parse/size=10 in a, Parse in b.
	if got := r.Benchmarks(); got != 3 {
		t.Errorf("Benchmarks() = %d, want 3", got)
	}
}
