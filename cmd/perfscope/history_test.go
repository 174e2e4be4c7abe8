package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/store"
)

// historyTestDB records 12 commits of one benchmark whose time has 2% noise
// and steps up 30% at the ninth commit (index 8); allocs/op stays 3. Only
// that commit was recorded with its subject and author.
func historyTestDB(t *testing.T) (path string, commits []string) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "perfscope.db")
	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for c := range 12 {
		var text strings.Builder
		text.WriteString("pkg: example.com/svc\n")
		level := 1000.0
		if c >= 8 {
			level *= 1.3
		}
		for range 10 {
			fmt.Fprintf(&text, "BenchmarkHandle-8 1000 %.1f ns/op 3 allocs/op\n", level*(1+0.02*rng.NormFloat64()))
		}
		commit := fmt.Sprintf("%02d%038x", c, c)
		commits = append(commits, commit)
		r := benchfmt.NewReader(strings.NewReader(text.String()), "test")
		var results []*benchfmt.Result
		for r.Scan() {
			if res, ok := r.Result().(*benchfmt.Result); ok {
				results = append(results, res.Clone())
			}
		}
		run := store.BenchRun{Commit: commit, Branch: "main", CommitTime: start.Add(time.Duration(c) * 24 * time.Hour),
			Machine: store.Machine{Hostname: "ci"}, Results: results}
		if c == 8 {
			run.Subject, run.Author = stepSubject, "Ada Lovelace"
		}
		if _, err := s.SaveBenchRun(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	return path, commits
}

// stepSubject is the subject of the commit where the time steps up.
const stepSubject = "handle: copy the request body"

// runHistory runs the history command and returns its standard output.
func runHistory(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"history"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestHistoryCommand(t *testing.T) {
	db, commits := historyTestDB(t)

	out, err := runHistory(t, "--db", db, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Series []history.Series }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Series) != 2 {
		t.Fatalf("got %d series, want sec/op and allocs/op", len(got.Series))
	}
	for _, s := range got.Series {
		if len(s.Commits) != 12 || s.Noise == nil {
			t.Fatalf("%s: %d commits, noise %v", s.Unit, len(s.Commits), s.Noise)
		}
		for i, c := range s.Commits {
			wantChanged := s.Unit == "sec/op" && i == 8
			if c.Changed != wantChanged || c.Commit != commits[i] {
				t.Errorf("%s commit %d (%s): changed %v, want %v", s.Unit, i, c.Commit, c.Changed, wantChanged)
			}
			if wantChanged && (c.Better != -1 || *c.Delta < 0.2) {
				t.Errorf("the step: %+v", c)
			}
			if (i == 8) != (c.Subject == stepSubject && c.Author == "Ada Lovelace") || (i != 8 && c.Subject+c.Author != "") {
				t.Errorf("%s commit %d: subject %q, author %q", s.Unit, i, c.Subject, c.Author)
			}
		}
	}

	out, err = runHistory(t, "--db", db, "--unit", "sec/op", "--changed")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, commits[8][:12]) || strings.Contains(out, commits[7][:12]) || !strings.Contains(out, "REGRESSION") ||
		!strings.Contains(out, stepSubject+" (Ada Lovelace)") {
		t.Errorf("--changed lists only the step:\n%s", out)
	}

	out, err = runHistory(t, "--db", db, "--unit", "sec/op", "--since", "2025-03-10T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, commits[8][:12]) || !strings.Contains(out, commits[9][:12]) || !strings.Contains(out, "need >= 5 commits") {
		t.Errorf("--since 2025-03-10 keeps 3 commits and says they are too few:\n%s", out)
	}

	out, err = runHistory(t, "--db", db, "--unit", "sec/op", "--since", "2025-03-10T00:00:00Z", "--changed")
	if err != nil {
		t.Fatal(err)
	}
	if want := "no commit marked changed in 1 metric; without --changed every commit shows"; !strings.Contains(out, "\n"+want) {
		t.Errorf("--changed with nothing marked: got\n%s\nwant a line %q", out, want)
	}
}

func TestHistoryCommandErrors(t *testing.T) {
	db, _ := historyTestDB(t)
	// A store with no benchmark in it.
	empty := filepath.Join(t.TempDir(), "empty.db")
	if _, code := perfCLI(t, "token", "create", "--db", empty); code != 0 {
		t.Fatalf("token create: exit %d", code)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--db", filepath.Join(t.TempDir(), "none.db")}, 1, "perfscope bench"},
		{[]string{"--db", db, "--bench", "NoSuchBenchmark"}, 1, "no recorded benchmark runs match --bench NoSuchBenchmark: leave it out to see which exist"},
		{[]string{"--db", db, "--bench", "No Such", "--machine", "m1"}, 1, "match --bench 'No Such' --machine m1: leave some out"},
		{[]string{"--db", db, "--since", "2099-01-01"}, 1, "match --since 2099-01-01: leave it out"},
		{[]string{"--db", empty}, 1, "no benchmarks recorded in " + empty + " yet: record results first (perfscope bench ./...)"},
		{[]string{"--db", empty, "--unit", "B/op"}, 1, "no benchmarks recorded in " + empty + " yet"},
		{[]string{"--db", db, "--bench", "("}, 2, "--bench"},
		{[]string{"--db", db, "--since", "soon"}, 2, "--since"},
		{[]string{"--db", db, "--format", "xml"}, 2, "--format"},
	} {
		_, err := runHistory(t, tc.args...)
		if err == nil {
			t.Errorf("%v: no error", tc.args)
			continue
		}
		code := 1
		if _, ok := err.(usageError); ok {
			code = 2
		}
		if code != tc.code || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: exit %d %q; want exit %d, one line mentioning %q", tc.args, code, err, tc.code, tc.want)
		}
		// Only the filters given are named.
		for _, name := range historyFilters {
			if flag := "--" + name; strings.Contains(err.Error(), flag) && !slices.Contains(tc.args, flag) {
				t.Errorf("%v: %q names %s, which was not given", tc.args, err, flag)
			}
		}
	}
}
