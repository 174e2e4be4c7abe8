// Command bad validates and cleans names with a regular expression and a
// replacer that it builds again on every call.
package main

import (
	"context"
	"regexp"
	"strings"

	"github.com/perfscope/perfscope/internal/findings/testdata/harness"
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
	valid := regexp.MustCompile(`^[a-z][a-z0-9_.:@|! ]*$`) // want: built-per-call
	if !valid.MatchString(s) {
		return ""
	}
	r := strings.NewReplacer(":", "_", "|", "_", "@", "_", " ", "_") // want: built-per-call
	return r.Replace(s)
}
