package benchstats_test

import (
	"context"
	"io"
	"testing"

	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/report"
)

// FuzzCompare drives arbitrary benchmark text through the whole compare
// path — stream, group, test, render in every format — which must never
// panic or hang, whatever the input.
//
// The seeds are a few lines each and larger inputs are passed over: the
// fuzzer minimizes every input that finds new coverage, and minimizing a
// whole benchmark file takes the fuzzing minute for one input instead of
// thousands.
func FuzzCompare(f *testing.F) {
	seeds := [][2]string{
		{"BenchmarkX-2 1 5 ns/op\nBenchmarkX-2 1 Inf ns/op\n", "BenchmarkX-2 1 NaN ns/op\nUnit ns/op assume=exact\nBenchmarkX-2 1 3 ns/op\n"},
		{"goos: linux\npkg: p\nBenchmarkA/n=1-8 10 100 ns/op 8 B/op 1 allocs/op\nBenchmarkA/n=1-8 10 110 ns/op 8 B/op 1 allocs/op\nBenchmarkB-8 5 0 ns/op\n",
			"goos: linux\npkg: p\nBenchmarkA/n=1-8 10 90 ns/op 16 B/op 2 allocs/op\nBenchmarkA/n=1-8 10 95 ns/op 16 B/op 2 allocs/op\nBenchmarkC-8 5 7 ns/op\n"},
		{"pkg: a\nBenchmarkX 1 1 ns/op\npkg: b\nBenchmarkX 1 2 ns/op\nUnit ns/op assume=normal\n", "cpu: x  y\nBenchmarkX 1 -1 ns/op\nnot a result\nBenchmarkX 1 1e308 MB/s\n"},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a)+len(b) > 4<<10 {
			return
		}
		ctx := context.Background()
		inputs := []*benchstats.Input{benchstats.TextInput("a", string(a)), benchstats.TextInput("b", string(b))}
		for _, opts := range []benchstats.Options{{}, {Ignore: []string{"pkg"}, Col: ".file,/n", Renames: []benchstats.Rename{{Old: "X", New: "Y"}}}} {
			cmp, err := benchstats.Compare(ctx, inputs, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := report.WriteBenchComparison(io.Discard, report.Text, cmp, nil); err != nil {
				t.Fatal(err)
			}
			if err := report.WriteBenchComparisonCSV(io.Discard, io.Discard, cmp); err != nil {
				t.Fatal(err)
			}
			if err := report.WriteBenchComparison(io.Discard, report.JSON, cmp, nil); err != nil {
				t.Fatal(err)
			}
			if err := report.WriteBenchComparison(io.Discard, report.Markdown, cmp, nil); err != nil {
				t.Fatal(err)
			}
		}
	})
}
