package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzReadBounded feeds bodies to ReadBounded: never a panic, every
// refusal an *InputError, and what is kept within the caps.
func FuzzReadBounded(f *testing.F) {
	f.Add([]byte("goos: linux\npkg: x\nBenchmarkA-8  100  12 ns/op  0 B/op\n"))
	f.Add([]byte("BenchmarkA 1 1 ns/op\x00\n"))
	f.Add([]byte("caf\xe9\nBenchmarkA 1 1 ns/op"))
	f.Add([]byte("note: " + strings.Repeat("n", MaxConfig) + "\nBenchmarkA 1 1 ns/op\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		parsed, err := ReadBounded(bytes.NewReader(body))
		if err != nil {
			var input *InputError
			if !errors.As(err, &input) {
				t.Fatalf("refused with %T, not as the input's fault: %v", err, err)
			}
			return
		}
		if len(parsed.Results) > MaxResults || len(parsed.Warnings) > MaxWarnings+1 {
			t.Fatalf("kept %d results and %d warnings", len(parsed.Results), len(parsed.Warnings))
		}
	})
}
