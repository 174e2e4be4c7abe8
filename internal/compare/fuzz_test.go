package compare

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCompare drives arbitrary benchmark text through the whole compare
// path — parse, group, test, render in every format — which must never
// panic or hang, whatever the input.
func FuzzCompare(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.txt")
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil && len(data) < 8<<10 {
			f.Add(data, data)
		}
	}
	f.Add([]byte("BenchmarkX-2 1 5 ns/op\nBenchmarkX-2 1 Inf ns/op\n"), []byte("BenchmarkX-2 1 NaN ns/op\nUnit ns/op assume=exact\nBenchmarkX-2 1 3 ns/op\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ia, err := ReadInput(bytes.NewReader(a), "a", "a")
		if err != nil {
			return
		}
		ib, err := ReadInput(bytes.NewReader(b), "b", "b")
		if err != nil {
			return
		}
		cmp, err := Compare([]*Input{ia, ib}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := cmp.WriteText(io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := cmp.WriteCSV(io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(io.Discard, cmp, nil); err != nil {
			t.Fatal(err)
		}
		if err := WriteMarkdown(io.Discard, cmp); err != nil {
			t.Fatal(err)
		}
	})
}
