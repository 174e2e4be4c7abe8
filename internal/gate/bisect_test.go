package gate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/testenv"
)

// TestSearchPath runs the search on simulated paths: every first bad
// commit of every length up to 40 is found within the builds binary
// search needs, and skipped commits are stepped around or, when they hide
// the answer, returned with it.
func TestSearchPath(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for first := 0; first < n; first++ {
			for _, broken := range []int{-1, n / 2, first - 1, first} {
				if broken == n-1 {
					continue // the bad commit is measured before the search
				}
				probes := 0
				lo, hi, err := searchPath(n, func(i int) (string, error) {
					if i < 0 || i >= n-1 {
						t.Fatalf("n=%d: probed %d, outside the commits between good and bad", n, i)
					}
					probes++
					switch {
					case i == broken:
						return BisectSkipped, nil
					case i >= first:
						return BisectBad, nil
					}
					return BisectGood, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("n=%d first=%d broken=%d", n, first, broken)
				wantLo, wantHi := first-1, first
				switch {
				case broken < 0:
				case broken == first: // it hides the answer: the answer is it or the next
					wantHi = first + 1
				case broken == first-1: // the answer is it or the first bad
					wantLo = first - 2
				}
				if lo != wantLo || hi != wantHi {
					t.Errorf("%s: lo %d hi %d, want %d %d", name, lo, hi, wantLo, wantHi)
				}
				// Binary search over the n-1 commits before bad needs
				// ceil(log2(n)) probes; a skip costs one more build.
				limit := int(math.Ceil(math.Log2(float64(n))))
				if broken >= 0 {
					limit++
				}
				if probes > limit {
					t.Errorf("%s: %d probes, want at most %d", name, probes, limit)
				}
			}
		}
	}
}

// TestSearchPathAllSkipped leaves the answer open between the last good
// and first bad commits when every commit between them is skipped.
func TestSearchPathAllSkipped(t *testing.T) {
	lo, hi, err := searchPath(5, func(i int) (string, error) { return BisectSkipped, nil })
	if err != nil || lo != -1 || hi != 4 {
		t.Fatalf("lo %d hi %d err %v, want -1 4", lo, hi, err)
	}
	stop := errors.New("stop")
	if _, _, err := searchPath(5, func(int) (string, error) { return "", stop }); !errors.Is(err, stop) {
		t.Fatalf("err %v, want the probe's", err)
	}
}

// bisectRepo writes a git repository of commits commits into dir: a
// module whose benchmark runs Mix, a loop of 1,000 rounds, which from
// commit changed on runs 1,020 (2% more work); commit broken (if in range)
// does not compile, and the next one fixes it. Each commit changes a
// version constant, so every commit builds a different binary. It returns
// its directory and the commits, oldest first.
func bisectRepo(t testing.TB, commits, changed, broken int) (string, []string) {
	t.Helper()
	r := testenv.NewGitRepo(t, "main")
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(r.Dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/mix\n\ngo 1.26\n")
	write("mix_test.go", `package mix

import "testing"

var sink uint64

func BenchmarkMix(b *testing.B) {
	for b.Loop() {
		sink += Mix()
	}
}
`)
	var hashes []string
	for i := range commits {
		rounds := 1000
		if i >= changed {
			rounds = 1020
		}
		write("mix.go", strings.ReplaceAll(`// Package mix mixes bits.
package mix

// Mix folds ROUNDS numbers into a hash.
func Mix() uint64 {
	h := uint64(1469598103934665603)
	for i := range ROUNDS {
		h ^= uint64(i)
		h *= 1099511628211
	}
	return h
}
`, "ROUNDS", strconv.Itoa(rounds)))
		version := "package mix\n\n// Version is the commit's number.\nconst Version = " + strconv.Itoa(i) + "\n"
		msg := fmt.Sprintf("commit %d", i)
		switch {
		case i == broken:
			version = "package mix\n\nconst Version = \n"
			msg += ": does not build"
		case i == changed:
			msg += ": mix 2% more rounds"
		}
		write("version.go", version)
		hashes = append(hashes, r.Commit(msg))
	}
	return r.Dir, hashes
}

// TestBisectFindsTheCommit bisects 32 commits (good the first, bad the
// last) where commit 19 makes Mix do 2% more work and commit 15 does not
// build: the answer is commit 19, found in at most 7 counted builds, with
// commit 15 skipped and named. Counts are exact, so the answer holds on a
// busy machine.
func TestBisectFindsTheCommit(t *testing.T) {
	valgrind, err := bench.FindValgrind()
	if err != nil {
		testenv.Missing(t, err.Error(), "apt-get install valgrind")
	}
	const commits, changed, broken = 32, 19, 15
	repo, hashes := bisectRepo(t, commits, changed, broken)
	var seen []string
	start := time.Now()
	r, err := Bisect(context.Background(), BisectOptions{
		Dir: repo, Good: "HEAD~" + strconv.Itoa(commits-1), Bad: "main", Bench: "Mix",
		Threshold: 0.01, Instructions: bench.InstructionOptions{Valgrind: valgrind},
		Progress: func(s BisectStep) {
			if s.Verdict != "" {
				seen = append(seen, s.Subject+": "+s.Verdict)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("steps: %s", strings.Join(seen, "; "))
	for _, s := range r.Steps {
		t.Logf("%s: %s in %v", s.Subject, s.Verdict, s.Elapsed.Round(time.Millisecond))
	}
	if r.FirstBad != nil {
		t.Logf("answer: %s (%s), %d builds, %d counted, %d skipped, in %v", r.FirstBad.Subject, r.FirstBad.Hash[:12], r.Builds, r.Counted, len(r.Skipped), time.Since(start).Round(time.Second))
	}
	if !r.Moved || !r.Exact() {
		t.Fatalf("moved %v, exact %v: %+v", r.Moved, r.Exact(), r)
	}
	if r.FirstBad.Hash != hashes[changed] {
		t.Errorf("first bad commit %s (%s), want %s (commit %d)", r.FirstBad.Hash, r.FirstBad.Subject, hashes[changed], changed)
	}
	if r.LastGood.Hash != hashes[changed-1] {
		t.Errorf("last good commit %s (%s), want its parent", r.LastGood.Hash, r.LastGood.Subject)
	}
	if r.Counted > 7 {
		t.Errorf("%d counted builds, want at most 7", r.Counted)
	}
	if !slices.ContainsFunc(r.Skipped, func(s BisectStep) bool {
		return s.Hash == hashes[broken] && strings.Contains(s.Reason, "does not build")
	}) {
		t.Errorf("commit %d is not named as skipped for not building: %+v", broken, r.Skipped)
	}
	if r.PathCommits != commits-1 || r.Builds != len(r.Steps) || r.Counted+len(r.Skipped) != r.Builds {
		t.Errorf("path %d, builds %d, counted %d, skipped %d, steps %d", r.PathCommits, r.Builds, r.Counted, len(r.Skipped), len(r.Steps))
	}
	// The change is Mix's 2% (its loop is nearly all the benchmark), far
	// from the 1% threshold on both sides.
	if c := r.FirstBad.Values[0].Change; c < 0.015 || c > 0.025 {
		t.Errorf("first bad commit moved %+.2f%%, want about +2%%", 100*c)
	}
	if c := r.LastGood.Values[0].Change; math.Abs(c) > 0.005 {
		t.Errorf("last good commit moved %+.2f%%, want about 0", 100*c)
	}
	// The answer says where: Mix, which does the 20 more rounds (or
	// BenchmarkMix, where the compiler inlines it), first, with nearly
	// all of the change.
	if len(r.Explanations) != 1 || len(r.Explanations[0].Functions) == 0 {
		t.Errorf("explanations %+v: want one, of BenchmarkMix", r.Explanations)
	} else if f := r.Explanations[0].Functions[0]; !strings.HasSuffix(f.Function, ".Mix") && !strings.HasSuffix(f.Function, ".BenchmarkMix") || f.Delta <= 0 || f.Share < 0.9 {
		t.Errorf("first changed function %+v: want Mix, with most of the change", f)
	}
	for _, s := range r.Steps {
		if (s.Verdict == BisectSkipped) != (s.Record == nil) {
			t.Errorf("%s: verdict %s, record %v", s.Subject, s.Verdict, s.Record != nil)
		}
		if s.Record != nil && (s.Record.Meta.Commit != s.Hash || len(s.Record.Results.Results) != 1) {
			t.Errorf("%s: recorded as commit %s with %d results", s.Subject, s.Record.Meta.Commit, len(s.Record.Results.Results))
		}
	}
}
