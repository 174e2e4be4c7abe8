package dashboard

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/bench"
)

// FuzzBenchUpload feeds benchmark upload bodies and query strings to the
// parsing of a benchmark upload: never a panic, every refusal the
// client's (bad input, or a malformed file naming the upload), and an
// accepted run has a commit without spaces or slashes.
func FuzzBenchUpload(f *testing.F) {
	f.Add("commit=abc123&branch=main&time=1700000000", []byte("goos: linux\npkg: x\nBenchmarkA-8  100  12 ns/op  0 B/op\n"))
	f.Add("dirty=maybe", []byte("commit: abc\nBenchmarkA 1 1 ns/op\n"))
	f.Add("", []byte("not a benchmark\n"))
	f.Fuzz(func(t *testing.T, query string, body []byte) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		parsed, err := bench.Parse(bytes.NewReader(body), "upload")
		if err != nil {
			var bad *bench.InputError
			if !(errors.As(err, &bad) && !bad.Cap) && !strings.Contains(err.Error(), "upload") {
				t.Fatalf("parse refused without naming the upload: %v", err)
			}
			return
		}
		run, err := BenchRun(q, parsed)
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("refused as the server's own failure: %v", err)
			}
			return
		}
		if run.Commit == "" || strings.ContainsAny(run.Commit, " \t\n/") || len(run.Results) == 0 {
			t.Fatalf("accepted run with commit %q and %d results", run.Commit, len(run.Results))
		}
	})
}
