// Command good pads with a strings.Builder sized up front: one allocation
// per label.
package main

import (
	"context"
	"strings"
	"unicode/utf8"

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
	n := width - len(s)
	if n <= 0 {
		return s
	}
	var b strings.Builder
	b.Grow(n*utf8.RuneLen(c) + len(s))
	for range n {
		b.WriteRune(c)
	}
	b.WriteString(s)
	return b.String()
}
