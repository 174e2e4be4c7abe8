// Command bad builds a padded label by concatenating one character at a
// time: every step copies the string built so far into a new one.
package main

import (
	"context"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

func main() {
	harness.Main(func(ctx context.Context) {
		n := 0
		harness.Loop(ctx, func() { n += len(pad("id-42", 200, '.')) })
		println(n)
	})
}

//go:noinline
func pad(s string, width int, c rune) string {
	for len(s) < width {
		s = string(c) + s // want: concat-loop
	}
	return s
}
