package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/store"
)

// bisectAllocsRepo is a repository whose benchmark makes one allocation
// an operation up to "step 1" and two from "step 2" on, tagged
// allocs-done; main then adds a second benchmark.
func bisectAllocsRepo(t *testing.T) *gateRepo {
	t.Helper()
	r := newGateRepo(t)
	for i, allocs := range []int{1, 1, 2, 2, 2} {
		r.writeBench(1, allocs)
		r.write("version.txt", fmt.Sprint(i))
		r.commit(fmt.Sprintf("step %d", i))
	}
	r.git("tag", "allocs-done")
	r.write("extra_test.go", "package gated\n\nimport \"testing\"\n\nfunc BenchmarkExtra(b *testing.B) {\n\tfor b.Loop() {\n\t}\n}\n")
	r.commit("extra benchmark")
	return r
}

// TestBisectAllocs finds the commit that added an allocation, and records
// each commit it measured in the store as a run of allocs/op alone.
func TestBisectAllocs(t *testing.T) {
	r := bisectAllocsRepo(t)
	t.Chdir(r.dir)
	db := filepath.Join(t.TempDir(), "bisect.db")
	out, code, msg := perfCLIMessage(t, "bisect", "--good", "allocs-done~5", "--bad", "allocs-done", "--measure", "allocs",
		"--threshold", "0", "-bench", "Work", "-q", "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d (%s), want 0\n%s", code, msg, out)
	}
	var v struct {
		Outcome  string
		Moved    bool
		Counted  int
		FirstBad struct {
			Subject string
			Values  []struct{ Value float64 }
		} `json:"first_bad"`
		LastGood struct{ Subject string } `json:"last_good"`
		Steps    []struct{ Commit, Verdict string }
		// Explanations say which allocation site the second object
		// comes from.
		Explanations []struct {
			Unit      string
			Delta     float64
			Functions []struct {
				Function, File string
				Delta          float64
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !v.Moved || v.FirstBad.Subject != "step 2" || v.LastGood.Subject != "step 1" {
		t.Fatalf("first bad %q after %q, want step 2 after step 1\n%s", v.FirstBad.Subject, v.LastGood.Subject, out)
	}
	if len(v.FirstBad.Values) != 1 || v.FirstBad.Values[0].Value != 2 {
		t.Errorf("allocs/op at the first bad commit: %+v, want 2", v.FirstBad.Values)
	}
	if !strings.Contains(v.Outcome, "first bad commit") {
		t.Errorf("outcome %q", v.Outcome)
	}
	// The new allocation's own line is up by one object an operation;
	// the total also carries the runtime's own allocations, which vary a
	// little from run to run.
	if len(v.Explanations) != 1 || v.Explanations[0].Unit != "allocs/op" || len(v.Explanations[0].Functions) == 0 ||
		v.Explanations[0].Functions[0].File != "work_test.go" || math.Abs(v.Explanations[0].Functions[0].Delta-1) > 0.02 {
		t.Errorf("explanations %+v: want the allocating line of work_test.go first, up by 1 allocs/op", v.Explanations)
	}

	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	commits, err := s.Commits(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(commits) != v.Counted || len(commits) != len(v.Steps) {
		t.Errorf("%d commits recorded, want the %d measured", len(commits), v.Counted)
	}
	for _, c := range commits {
		cs, err := s.CommitSamples(context.Background(), c.Hash, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs.Samples) != 1 || cs.Samples[0].Unit != "allocs/op" || !strings.HasPrefix(cs.Samples[0].Name, "Work") {
			t.Errorf("commit %s recorded %+v, want allocs/op of Work alone", c.Hash, cs.Samples)
		}
	}

	// Between two commits with the same allocations, nothing to find.
	out, code, _ = perfCLIMessage(t, "bisect", "--good", "allocs-done~2", "--bad", "allocs-done", "--measure", "allocs", "-b", "Work", "-q", "--no-store")
	if code != 1 || !strings.Contains(out, "nothing to find") {
		t.Errorf("exit %d, want 1 saying there is nothing to find:\n%s", code, out)
	}
}

// TestBisectBadInput refuses, in one line with exit status 2 and without
// recording anything, what names nothing to search.
func TestBisectBadInput(t *testing.T) {
	r := bisectAllocsRepo(t)
	t.Chdir(r.dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--good", "nosuch", "--bad", "main", "-b", "Work"}, "--good nosuch: no branch, tag or commit by that name"},
		{[]string{"--good", "HEAD~1", "--bad", "v9", "-b", "Work"}, "--bad v9: no branch, tag or commit by that name"},
		{[]string{"--good", "main", "--bad", "HEAD~2", "-b", "Work"}, "is not an ancestor of --bad HEAD~2"},
		{[]string{"--good", "HEAD~2", "--bad", "main", "-b", "NoSuchBenchmark"}, `--bench "NoSuchBenchmark" matches no benchmark`},
		{[]string{"--good", "allocs-done", "--bad", "main", "-b", "."}, "BenchmarkExtra"},
		{[]string{"--good", "allocs-done", "--bad", "main", "-b", "."}, "exists at --bad main but not at --good allocs-done"},
		{[]string{"--good", "main", "--bad", "main", "-b", "Work"}, "are the same commit"},
		{[]string{"--good", "HEAD~2", "--bad", "main"}, "--bench is required"},
		{[]string{"--good", "HEAD~2", "--bad", "main", "-b", "Work", "--measure", "time"}, `--measure "time": want instructions, allocs or bytes`},
		{[]string{"--good", "HEAD~2", "--bad", "main", "-b", "Work", "--threshold", "much"}, `--threshold "much"`},
	} {
		db := filepath.Join(t.TempDir(), "bisect.db")
		args := append([]string{"bisect", "--measure", "allocs", "--db", db, "-q"}, c.args...)
		out, code, msg := perfCLIMessage(t, args...)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || out != "" {
			t.Errorf("%s: exit %d, message %q, output %q; want 2 and one line saying %q", strings.Join(c.args, " "), code, msg, out, c.want)
		}
		if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the store was opened (%v): bad input records nothing", strings.Join(c.args, " "), err)
		}
	}
}

func TestParseThreshold(t *testing.T) {
	for in, want := range map[string]float64{"1%": 0.01, "0.5": 0.005, "0": 0, " 2 % ": 0.02} {
		if got, err := parseThreshold(in); err != nil || got != want {
			t.Errorf("parseThreshold(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1%", "x", "NaN"} {
		if _, err := parseThreshold(in); err == nil {
			t.Errorf("parseThreshold(%q) accepted", in)
		}
	}
}
