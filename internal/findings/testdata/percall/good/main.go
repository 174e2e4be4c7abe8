// Command good builds its regular expression and replacer once.
package main

import (
	"context"
	"regexp"
	"strings"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
)

var (
	valid    = regexp.MustCompile(`^[a-z][a-z0-9_.:@|! ]*$`)
	replacer = strings.NewReplacer(":", "_", "|", "_", "@", "_", " ", "_")
)

func main() {
	names := []string{"user:alice@example.com", "bad name!", "svc|requests total"}
	harness.Main(func(ctx context.Context) {
		n := 0
		harness.Loop(ctx, func() {
			for _, s := range names {
				n += len(clean(s))
			}
		})
		println(n)
	})
}

//go:noinline
func clean(s string) string {
	if !valid.MatchString(s) {
		return ""
	}
	return replacer.Replace(s)
}
