package bench

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// FuzzParse feeds arbitrary text to the reading path every perfscope
// command uses. It must never panic or fail; every result it keeps must
// have values with units, every skipped line must be named by a line of
// the input, and writing the results back must read back as many.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../benchstats/testdata/*.txt")
	for _, s := range seeds {
		// A fixture's first lines, not the whole file: the fuzzer
		// minimizes every input that finds new code one byte at a time,
		// and kilobyte seeds keep it minimizing instead of fuzzing.
		if data, err := os.ReadFile(s); err == nil {
			lines := bytes.SplitAfter(data, []byte("\n"))
			f.Add(bytes.Join(lines[:min(8, len(lines))], nil))
		}
	}
	f.Add([]byte("BenchmarkX-2 \t 1 \t 1 ns/op\nUnit ns/op assume=exact\nBenchmarkY 5 5 B/op 3\n"))
	f.Add([]byte("commit: abc\nBenchmark\nBenchmarkZ 1\n"))
	f.Add([]byte("BenchmarkN-2 1 NaN ns/op\nBenchmarkN-2 1 nan B/op\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4<<10 {
			return
		}
		res, err := Parse(bytes.NewReader(data), "fuzz.txt")
		if err != nil {
			// Only a line longer than the scanner's buffer fails a read.
			if !strings.Contains(err.Error(), "too long") {
				t.Fatalf("read error on in-memory input: %v", err)
			}
			return
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, w := range res.Warnings {
			se, ok := w.(*benchfmt.SyntaxError)
			if !ok || se.Line < 1 || se.Line > lines || se.FileName != "fuzz.txt" {
				t.Fatalf("warning %v does not name a line of the input", w)
			}
		}
		var buf bytes.Buffer
		wr := benchfmt.NewWriter(&buf)
		for _, r := range res.Results {
			// benchfmt accepts odd but parseable lines
			// ("Benchmark 0 0 0") as benchstat does; what
			// must hold is that a kept result has values.
			if len(r.Values) == 0 || r.Iters < 0 {
				t.Fatalf("kept a malformed result: %+v", r)
			}
			for _, v := range r.Values {
				if v.Unit == "" || math.IsNaN(v.Value) {
					t.Fatalf("kept value %v %q in %s", v.Value, v.Unit, r.Name)
				}
			}
			if err := wr.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		again, err := Parse(&buf, "again.txt")
		if err != nil || len(again.Results) != len(res.Results) {
			t.Fatalf("round trip: %d results, want %d (err %v)", len(again.Results), len(res.Results), err)
		}
	})
}
