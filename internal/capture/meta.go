package capture

import (
	"strings"

	"github.com/perfscope/perfscope/internal/run"
)

// redactArgs returns a copy of a command line with credentials replaced:
// values of header arguments ("Authorization: Bearer x") whose names look
// sensitive, and in URLs the values of query parameters and passwords
// (run.RedactURL). Run directories get copied, committed and uploaded; the
// credentials used to make them must not travel along.
func redactArgs(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = redactArg(a)
	}
	return out
}

func redactArg(a string) string {
	// A flag written as --header=Name: value carries the header after "=".
	prefix, rest := "", a
	if strings.HasPrefix(a, "-") {
		if i := strings.IndexByte(a, '='); i >= 0 {
			prefix, rest = a[:i+1], a[i+1:]
		}
	}
	if name, _, ok := strings.Cut(rest, ":"); ok && !strings.ContainsAny(name, " /") && name != "" {
		lower := strings.ToLower(name)
		for _, w := range []string{"auth", "cookie", "token", "secret", "key", "password"} {
			if strings.Contains(lower, w) {
				return prefix + name + ": " + run.Redacted
			}
		}
	}
	if strings.Contains(rest, "://") {
		return prefix + run.RedactURL(rest)
	}
	return a
}
