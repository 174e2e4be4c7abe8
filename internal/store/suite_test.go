package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/run"
)

// parseBench reads Go benchmark output the way perfscope bench will.
func parseBench(t testing.TB, text string) []*benchfmt.Result {
	t.Helper()
	r := benchfmt.NewReader(strings.NewReader(text), "test")
	var out []*benchfmt.Result
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			out = append(out, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Fatalf("benchmark text: %v", rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// benchText makes count samples of two benchmarks in two packages, one with
// a sub-benchmark and a custom unit; scale multiplies every time.
func benchText(count int, scale float64) string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: example.com/a\ncpu: Test CPU\n")
	for i := range count {
		fmt.Fprintf(&b, "BenchmarkParse/size=10-8 \t 1000\t %.1f ns/op\t 64 B/op\t 2 allocs/op\n", scale*(100+float64(i)))
		fmt.Fprintf(&b, "BenchmarkParse/size=1000-8 \t 100\t %.1f ns/op\t 6400 B/op\t 3 allocs/op\t %d items/op\n", scale*(9000+float64(i)), 7+i)
	}
	b.WriteString("pkg: example.com/b\n")
	for i := range count {
		fmt.Fprintf(&b, "BenchmarkEncode-8 \t 1000\t %.1f ns/op\t %.1f MB/s\n", scale*(50+float64(i)), 300-float64(i))
	}
	return b.String()
}

var (
	machineA = Machine{Hostname: "builder-a", GOOS: "linux", GOARCH: "amd64", CPU: "Test CPU"}
	machineB = Machine{Hostname: "builder-b", GOOS: "linux", GOARCH: "arm64", CPU: "Other CPU"}
	// nanosecond is a variable so that products with it round the way
	// benchfmt's do at run time, not exactly like constant expressions.
	nanosecond = 1e-9
	epoch      = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
)

// runStoreSuite checks the behaviour the store must have on every engine.
// s must be empty.
func runStoreSuite(t *testing.T, s *DB) {
	ctx := context.Background()
	save := func(t *testing.T, saved BenchRun) int64 {
		t.Helper()
		id, err := s.SaveBenchRun(ctx, saved)
		if err != nil {
			t.Fatalf("SaveBenchRun(%s): %v", saved.Commit, err)
		}
		return id
	}
	base := BenchRun{Branch: "main", Machine: machineA, GoVersion: "go1.26.8", Package: "example.com/default"}
	saved := func(commit string, commitAt int, scale float64) BenchRun {
		r := base
		r.Commit = commit
		r.CommitTime = epoch.Add(time.Duration(commitAt) * time.Hour)
		r.Time = epoch.Add(48 * time.Hour)
		r.Results = parseBench(t, benchText(5, scale))
		return r
	}

	// Inserted out of commit order on purpose: c3 was committed before c2.
	save(t, saved("c1aaaaaaaa", 0, 1))
	save(t, saved("c3cccccccc", 1, 1.5))
	save(t, saved("c2bbbbbbbb", 2, 2))
	// A second run of the same commit, recorded with the commit's
	// subject and author, which the first run (an older client's) lacks.
	second := saved("c2bbbbbbbb", 2, 2)
	second.Subject, second.Author = "parse: skip <script>alert(1)</script>\ncopies", "Ada Lovelace"
	save(t, second)
	dirty := saved("c2bbbbbbbb", 2, 9)
	dirty.Dirty = true
	save(t, dirty)
	feature := saved("f1ffffffff", 3, 3)
	feature.Branch, feature.Machine = "feature", machineB
	save(t, feature)

	t.Run("Commits", func(t *testing.T) {
		cs, err := s.Commits(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range cs {
			got = append(got, fmt.Sprintf("%s/%d", c.Ref(), c.Runs))
		}
		want := []string{"c1aaaaaaaa/1", "c3cccccccc/1", "c2bbbbbbbb/2", "c2bbbbbbbb+dirty/1", "f1ffffffff/1"}
		if !slices.Equal(got, want) {
			t.Errorf("by commit time: got %v, want %v", got, want)
		}
		if !cs[0].Time.Equal(epoch) || !cs[0].FirstRun.Equal(epoch.Add(48*time.Hour)) {
			t.Errorf("times of %s: commit %v, first run %v", cs[0].Hash, cs[0].Time, cs[0].FirstRun)
		}
		cs, err = s.Commits(ctx, Filter{Order: ByInsertion, Branch: "main", Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 2 || cs[0].Ref() != "c2bbbbbbbb" || cs[1].Ref() != "c2bbbbbbbb+dirty" {
			t.Errorf("last 2 on main by insertion: %+v", cs)
		}
		cs, err = s.Commits(ctx, Filter{Machine: "builder-b"})
		if err != nil || len(cs) != 1 || cs[0].Hash != "f1ffffffff" || cs[0].Branch != "feature" || !slices.Equal(cs[0].Machines, []string{"builder-b"}) {
			t.Errorf("machine filter: %+v, %v", cs, err)
		}
		cs, err = s.Commits(ctx, Filter{Since: epoch.Add(2 * time.Hour)})
		if err != nil || len(cs) != 3 {
			t.Errorf("since filter: %+v, %v", cs, err)
		}
	})

	t.Run("SubjectAndAuthor", func(t *testing.T) {
		const subject = "parse: skip <script>alert(1)</script> copies"
		cs, err := s.Commits(ctx, Filter{Branch: "main"})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Commit{}
		for _, c := range cs {
			got[c.Ref()] = c
		}
		if c := got["c2bbbbbbbb"]; c.Subject != subject || c.Author != "Ada Lovelace" || c.Runs != 2 {
			t.Errorf("commit with a run that names them: %+v", c)
		}
		if c := got["c1aaaaaaaa"]; c.Subject != "" || c.Author != "" {
			t.Errorf("commit recorded without them: %+v", c)
		}
		js, err := json.Marshal(got["c2bbbbbbbb"])
		if err != nil || !strings.Contains(string(js), `"subject":"parse: skip \u003cscript\u003ealert(1)\u003c/script\u003e copies","author":"Ada Lovelace"`) {
			t.Errorf("JSON of a commit: %s, %v", js, err)
		}
		if js, _ := json.Marshal(got["c1aaaaaaaa"]); strings.Contains(string(js), "subject") || strings.Contains(string(js), "author") {
			t.Errorf("JSON of a commit without them: %s", js)
		}
		pts, err := s.Series(ctx, SeriesKey{Package: "example.com/b", Name: "Encode-8", Unit: "sec/op"}, Filter{Branch: "main"})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range pts {
			if p.Commit.Ref() == "c2bbbbbbbb" {
				found = p.Commit.Subject == subject && p.Commit.Author == "Ada Lovelace"
			}
		}
		if !found {
			t.Errorf("series points: %+v", pts)
		}
		cs2, err := s.CommitSamples(ctx, "c2bb", Filter{})
		if err != nil || cs2.Commit.Subject != subject || cs2.Commit.Author != "Ada Lovelace" {
			t.Errorf("CommitSamples: %+v, %v", cs2, err)
		}
	})

	t.Run("Benchmarks", func(t *testing.T) {
		bs, err := s.Benchmarks(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		want := []Benchmark{
			// Bytewise: '-' sorts before '0'.
			{Package: "example.com/a", Name: "Parse/size=10-8", Units: []string{"B/op", "allocs/op", "sec/op"}},
			{Package: "example.com/a", Name: "Parse/size=1000-8", Units: []string{"B/op", "allocs/op", "items/op", "sec/op"}},
			{Package: "example.com/b", Name: "Encode-8", Units: []string{"B/s", "sec/op"}},
		}
		if fmt.Sprint(bs) != fmt.Sprint(want) {
			t.Errorf("got %v\nwant %v", bs, want)
		}
		for _, tc := range []struct {
			f    Filter
			want int
		}{
			{Filter{Name: "size=10-"}, 1},
			{Filter{Package: `/b$`}, 1},
			{Filter{Unit: "items/op"}, 1},
			{Filter{Branch: "feature", Machine: "builder-b"}, 3},
			{Filter{Branch: "feature", Machine: "builder-a"}, 0},
			{Filter{Branch: "nope"}, 0},
		} {
			bs, err := s.Benchmarks(ctx, tc.f)
			if err != nil || len(bs) != tc.want {
				t.Errorf("Benchmarks(%+v) = %v, %v; want %d benchmarks", tc.f, bs, err, tc.want)
			}
		}
		if _, err := s.Benchmarks(ctx, Filter{Name: "("}); err == nil {
			t.Error("bad regular expression: no error")
		}
	})

	t.Run("Series", func(t *testing.T) {
		key := SeriesKey{Package: "example.com/a", Name: "Parse/size=10-8", Unit: "sec/op"}
		ps, err := s.Series(ctx, key, Filter{Branch: "main"})
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 4 {
			t.Fatalf("got %d points, want 4: %+v", len(ps), ps)
		}
		if ps[0].Hash != "c1aaaaaaaa" || ps[1].Hash != "c3cccccccc" || ps[2].Ref() != "c2bbbbbbbb" {
			t.Errorf("order: %s %s %s", ps[0].Hash, ps[1].Hash, ps[2].Ref())
		}
		// All samples, exactly, in sec as benchfmt tidies ns/op.
		var want []float64
		for i := range 5 {
			want = append(want, float64(100+i)*nanosecond)
		}
		if !slices.Equal(ps[0].Values, want) {
			t.Errorf("c1 values %v, want %v", ps[0].Values, want)
		}
		if len(ps[2].Values) != 10 || len(ps[2].RunIDs) != 2 {
			t.Errorf("c2 merges its two runs: %d values from runs %v", len(ps[2].Values), ps[2].RunIDs)
		}
		ps, err = s.Series(ctx, SeriesKey{Package: "example.com/a", Name: "Parse/size=1000-8", Unit: "items/op"}, Filter{Order: ByInsertion, Limit: 1})
		if err != nil || len(ps) != 1 || ps[0].Hash != "f1ffffffff" || !slices.Equal(ps[0].Values, []float64{7, 8, 9, 10, 11}) {
			t.Errorf("custom unit, latest by insertion: %+v, %v", ps, err)
		}
		ps, err = s.Series(ctx, SeriesKey{Name: "Nope", Unit: "sec/op"}, Filter{})
		if err != nil || len(ps) != 0 {
			t.Errorf("unknown series: %v, %v", ps, err)
		}
	})

	t.Run("CommitSamples", func(t *testing.T) {
		cs, err := s.CommitSamples(ctx, "c2bb", Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if cs.Commit.Hash != "c2bbbbbbbb" || cs.Commit.Dirty || cs.Commit.Runs != 2 || len(cs.Samples) != 9 {
			t.Errorf("got commit %+v with %d metrics", cs.Commit, len(cs.Samples))
		}
		for _, m := range cs.Samples {
			if len(m.Values) != 10 {
				t.Errorf("%s %s: %d values, want 10", m.Name, m.Unit, len(m.Values))
			}
		}
		cs, err = s.CommitSamples(ctx, "c2bbbbbbbb+dirty", Filter{Name: "Encode", Unit: "sec/op"})
		if err != nil || !cs.Commit.Dirty || len(cs.Samples) != 1 || cs.Samples[0].Values[0] != 450*nanosecond {
			t.Errorf("dirty commit: %+v, %v", cs, err)
		}
		for _, ref := range []string{"0000000", "c2", "c2bbbbbbbbb"} {
			if _, err := s.CommitSamples(ctx, ref, Filter{}); !errors.Is(err, ErrUnknownCommit) {
				t.Errorf("CommitSamples(%q): %v, want ErrUnknownCommit", ref, err)
			}
		}
		if _, err := s.CommitSamples(ctx, "c1aaaaaaaa", Filter{Branch: "feature"}); !errors.Is(err, ErrUnknownCommit) {
			t.Errorf("commit filtered out: %v, want ErrUnknownCommit", err)
		}
		save(t, saved("c1aaaaaaab", 9, 1))
		if _, err := s.CommitSamples(ctx, "c1aaaa", Filter{}); err == nil || !strings.Contains(err.Error(), "ambiguous") {
			t.Errorf("ambiguous prefix: %v", err)
		}
		if cs, err := s.CommitSamples(ctx, "c1aaaaaaaa", Filter{}); err != nil || cs.Commit.Hash != "c1aaaaaaaa" {
			t.Errorf("exact hash that prefixes no other: %v", err)
		}
	})

	t.Run("SaveErrors", func(t *testing.T) {
		if _, err := s.SaveBenchRun(ctx, BenchRun{Results: parseBench(t, benchText(1, 1))}); err == nil {
			t.Error("run without commit saved")
		}
		if _, err := s.SaveBenchRun(ctx, BenchRun{Commit: "e0e0e0e0"}); err == nil {
			t.Error("run without results saved")
		}
		if _, err := s.CommitSamples(ctx, "e0e0e0e0", Filter{}); !errors.Is(err, ErrUnknownCommit) {
			t.Errorf("a failed save left a commit behind: %v", err)
		}
	})

	t.Run("ProfileRuns", func(t *testing.T) {
		for i, id := range []string{"run-1", "run-2", "run-1"} {
			r := &run.Run{
				ID: id, Dir: "/runs/" + id, Target: "http://127.0.0.1:8080/", Version: "v0",
				Start: epoch.Add(time.Duration(i) * time.Minute), End: epoch.Add(time.Duration(i)*time.Minute + 30*time.Second),
				GitCommit: "c1aaaaaaaa", GitBranch: "main", GitSubject: "parse: <b>faster</b>\r\nagain", GitAuthor: "Ada",
				Load:     &loadgen.Result{Requests: int64(1000 * (i + 1)), Throughput: 500, Latency: loadgen.Latency{P50: 1.5, P99: 9}},
				Profiles: []run.ProfileFile{{Kind: run.KindCPU, File: "cpu.pb.gz"}, {Kind: run.KindBlock, Error: "disabled"}},
			}
			if err := s.SaveProfileRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		rs, err := s.ProfileRuns(ctx, RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 2 || rs[0].ID != "run-1" || rs[0].Requests != 3000 || rs[0].ProfileOK != 1 || rs[1].ID != "run-2" {
			t.Errorf("profile runs (run-1 re-saved last, so newest): %+v", rs)
		}
		if rs[0].P99Ms != 9 || !rs[0].Start.Equal(epoch.Add(2*time.Minute)) || rs[0].Commit != "c1aaaaaaaa" ||
			rs[0].Branch != "main" || rs[0].Subject != "parse: <b>faster</b> again" || rs[0].Author != "Ada" {
			t.Errorf("fields: %+v", rs[0])
		}
		if rs, err := s.ProfileRuns(ctx, RunFilter{Limit: 1}); err != nil || len(rs) != 1 {
			t.Errorf("limit: %v, %v", rs, err)
		}
		if err := s.SaveProfileRun(ctx, &run.Run{}); err == nil {
			t.Error("run without id indexed")
		}
		if err := s.DeleteProfileRun(ctx, "run-2"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ProfileRun(ctx, "run-2"); !errors.Is(err, ErrUnknownRun) {
			t.Errorf("deleted run still found: %v", err)
		}
		if err := s.DeleteProfileRun(ctx, "run-2"); !errors.Is(err, ErrUnknownRun) {
			t.Errorf("deleting a deleted run: %v, want ErrUnknownRun", err)
		}
		if rs, err := s.ProfileRuns(ctx, RunFilter{}); err != nil || len(rs) != 1 || rs[0].ID != "run-1" {
			t.Errorf("runs after deleting run-2: %+v, %v", rs, err)
		}
	})

	t.Run("LoadVerdict", func(t *testing.T) {
		// Each run keeps the verdict of the threshold it was made with;
		// a result saved before loads were judged gets the default.
		for _, tc := range []struct {
			id        string
			failures  int64
			maxErrors float64 // 0: no verdict saved
			failed    bool
		}{
			{"verdict-lenient", 30, 0.05, false},
			{"verdict-strict", 8, 0.005, true},
			{"verdict-default-failed", 20, 0, true},
			{"verdict-default-healthy", 5, 0, false},
		} {
			l := &loadgen.Result{Requests: 1000, Failures: tc.failures, Successes: 1000 - tc.failures}
			if tc.maxErrors > 0 {
				l.Health = loadgen.Assess(l, tc.maxErrors)
			}
			if err := s.SaveProfileRun(ctx, &run.Run{ID: tc.id, Start: epoch.Add(time.Hour), Load: l}); err != nil {
				t.Fatal(err)
			}
			got, err := s.ProfileRun(ctx, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if got.LoadFailed != tc.failed {
				t.Errorf("%s: %d of 1000 failed, max errors %v: load failed = %v, want %v", tc.id, tc.failures, tc.maxErrors, got.LoadFailed, tc.failed)
			}
		}
	})

	t.Run("ConcurrentWriters", func(t *testing.T) {
		// New benchmarks appear in every writer at once: the first-sight
		// inserts must not collide.
		const writers, runs = 4, 3
		text := strings.ReplaceAll(benchText(3, 1), "Benchmark", "BenchmarkConcurrent")
		var wg sync.WaitGroup
		errs := make(chan error, writers*runs)
		for w := range writers {
			wg.Go(func() {
				for i := range runs {
					r := base
					r.Branch = "concurrent"
					r.Commit = fmt.Sprintf("d%02d%02d0000", w, i)
					r.Results = parseBench(t, text)
					if _, err := s.SaveBenchRun(ctx, r); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		cs, err := s.Commits(ctx, Filter{Branch: "concurrent"})
		if err != nil || len(cs) != writers*runs {
			t.Errorf("got %d commits, want %d (%v)", len(cs), writers*runs, err)
		}
		bs, err := s.Benchmarks(ctx, Filter{Name: "^Concurrent"})
		if err != nil || len(bs) != 3 {
			t.Errorf("got %v, %v", bs, err)
		}
	})

	t.Run("InstructionProfiles", func(t *testing.T) {
		// Real profiles, as 'perfscope bench --measure instructions'
		// recorded them of one benchmark at two commits.
		var data [2][]byte
		for i, name := range []string{"base", "head"} {
			var err error
			if data[i], err = os.ReadFile(filepath.Join("..", "server", "testdata", "instructions", name+".instructions.pb.gz")); err != nil {
				t.Fatal(err)
			}
		}
		r := base
		r.Branch, r.Commit = "profiles", "e1eeeeeeee"
		r.Results = parseBench(t, benchText(1, 1))
		r.InstructionProfiles = []InstructionProfile{{Package: "example.com/a", Name: "Parse/size=10-8", Data: data[0]}}
		first := save(t, r)
		// A later run of the same commit keeps its own profile of the
		// benchmark and one of another; a run without profiles (an
		// upload) changes nothing.
		r.InstructionProfiles = []InstructionProfile{{Package: "example.com/a", Name: "Parse/size=10-8", Data: data[1]},
			{Package: "example.com/b", Name: "Encode-8", Data: data[0]}}
		second := save(t, r)
		r.InstructionProfiles = nil
		save(t, r)
		c := Commit{Hash: "e1eeeeeeee"}
		ps, err := s.InstructionProfiles(ctx, c, Filter{})
		want := []InstructionProfile{{RunID: second, Package: "example.com/a", Name: "Parse/size=10-8"}, {RunID: second, Package: "example.com/b", Name: "Encode-8"}}
		if err != nil || !slices.EqualFunc(ps, want, func(a, b InstructionProfile) bool {
			return a.RunID == b.RunID && a.Package == b.Package && a.Name == b.Name && a.Data == nil
		}) {
			t.Errorf("InstructionProfiles: %+v, %v; want %+v", ps, err, want)
		}
		if ps, err := s.InstructionProfiles(ctx, c, Filter{Package: "^example.com/b$"}); err != nil || len(ps) != 1 || ps[0].Name != "Encode-8" {
			t.Errorf("filtered by package: %+v, %v", ps, err)
		}
		if ps, err := s.InstructionProfiles(ctx, c, Filter{Machine: "builder-b"}); err != nil || len(ps) != 0 {
			t.Errorf("another machine's: %+v, %v", ps, err)
		}
		for _, tc := range []struct {
			run  int64
			want []byte
		}{{first, data[0]}, {second, data[1]}} {
			got, err := s.InstructionProfileData(ctx, tc.run, "example.com/a", "Parse/size=10-8")
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Errorf("run %d: %d bytes (%v), want the %d saved", tc.run, len(got), err, len(tc.want))
			}
		}
		if _, err := s.InstructionProfileData(ctx, first, "example.com/b", "Encode-8"); !errors.Is(err, ErrNoInstructionProfile) {
			t.Errorf("a profile the run did not keep: %v, want ErrNoInstructionProfile", err)
		}
		r.Commit = "e2eeeeeeee"
		r.InstructionProfiles = []InstructionProfile{{Package: "example.com/a", Name: "Parse/size=10-8", Data: make([]byte, bench.MaxInstructionProfileBytes+1)}}
		if _, err := s.SaveBenchRun(ctx, r); err == nil || !strings.Contains(err.Error(), "more than") {
			t.Errorf("an oversized profile: %v, want it refused", err)
		}
		if _, err := s.CommitSamples(ctx, "e2eeeeeeee", Filter{}); !errors.Is(err, ErrUnknownCommit) {
			t.Errorf("the run of the refused profile was stored: %v", err)
		}
	})
}
