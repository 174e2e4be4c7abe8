package api

import (
	"net/url"
	"testing"
)

func TestBenchParamsRoundTrip(t *testing.T) {
	p := BenchParams{Commit: "0123abcd", Branch: "main", Dirty: "false", CommitTime: "2026-01-02T03:04:05Z", Machine: "ci-1", Package: "example.com/p"}
	q := p.Values()
	if q.Get("commit_time") != p.CommitTime || q.Get("package") != p.Package || q.Has("goos") || q.Has("time") {
		t.Errorf("Values() = %v: want set parameters only, by their API names", q)
	}
	if got := ParseBenchParams(q); got != p {
		t.Errorf("ParseBenchParams(Values()) = %+v, want %+v", got, p)
	}
	if got := ParseBenchParams(url.Values{"branch": {"  release  "}}); got.Branch != "release" {
		t.Errorf("ParseBenchParams did not trim: %q", got.Branch)
	}
}
