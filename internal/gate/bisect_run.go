package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/measure"
)

// Bisect finds the first commit on bad's first-parent path after good at
// which the measure of the benchmarks opts.Bench matches moved beyond
// opts.Threshold from the good commit's, in the direction it moved from
// good to bad. It measures good and bad first; when no benchmark moved
// between them the result says so (Moved false) and nothing else is
// built. Then it binary-searches the path: each commit is checked out
// into a temporary worktree, its tests built and its benchmarks measured
// once, as exact measures need no more. A commit that does not build, or
// whose test binary lacks a followed benchmark, is skipped and a
// neighbour measured instead.
//
// Refusals of the input are *BisectInputError, returned before anything
// is recorded: an unknown reference, good not an ancestor of bad, a
// pattern matching no benchmark, a benchmark at one end only. A failure
// to measure good or bad wraps ErrBisectNotMeasured. After the ends were
// measured, the result is returned with any error (cancellation), holding
// the steps measured until then.
func Bisect(ctx context.Context, opts BisectOptions) (*BisectResult, error) {
	start := time.Now()
	if opts.Dir == "" {
		opts.Dir = "."
	}
	if len(opts.Packages) == 0 {
		opts.Packages = []string{"."}
	}
	if opts.Unit == "" {
		opts.Unit = bench.UnitInstructions
	}
	if opts.Benchtime == "" {
		opts.Benchtime = DefaultBenchtime
	}
	if opts.Bench == "" {
		return nil, inputErrorf("--bench is required: a regular expression of the benchmarks to follow")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("module directory: %w", err)
	}
	root, err := bench.RepoRoot(ctx, dir)
	if err != nil {
		return nil, inputErrorf("not inside a git work tree: run bisect from a checkout")
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, fmt.Errorf("module directory: %w", err)
	}
	var ends [2]BisectEnd
	for i, ref := range []string{opts.Good, opts.Bad} {
		flag := [2]string{"--good", "--bad"}[i]
		if ref == "" {
			return nil, inputErrorf("%s is required (a branch, tag, HEAD~3 or a hash)", flag)
		}
		hash, err := gitstate.ResolveCommit(ctx, root, ref)
		var re *gitstate.RefError
		if errors.As(err, &re) {
			return nil, inputErrorf("%s %s: %s", flag, ref, re.Reason)
		} else if err != nil {
			return nil, err
		}
		c, err := gitstate.Describe(ctx, root, hash)
		if err != nil {
			return nil, err
		}
		ends[i] = BisectEnd{Ref: ref, PathCommit: c}
	}
	good, bad := ends[0], ends[1]
	if good.Hash == bad.Hash {
		return nil, inputErrorf("--good %s and --bad %s are the same commit (%s): there is nothing between them", good.Ref, bad.Ref, gitstate.Short(good.Hash))
	}
	if ok, err := gitstate.IsAncestor(ctx, root, good.Hash, bad.Hash); err != nil {
		return nil, err
	} else if !ok {
		return nil, inputErrorf("--good %s (%s) is not an ancestor of --bad %s (%s): name a good commit older than the bad one, on its history",
			good.Ref, gitstate.Short(good.Hash), bad.Ref, gitstate.Short(bad.Hash))
	}
	path, err := gitstate.FirstParentPath(ctx, root, good.Hash, bad.Hash)
	if err != nil {
		return nil, err
	}
	if len(path) == 0 || path[len(path)-1].Hash != bad.Hash {
		return nil, fmt.Errorf("the first-parent path from %s to %s is empty", gitstate.Short(good.Hash), gitstate.Short(bad.Hash))
	}
	if opts.Unit == bench.UnitInstructions && opts.Instructions.Valgrind == "" {
		v, err := bench.FindValgrind()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBisectNotMeasured, err)
		}
		opts.Instructions.Valgrind = v
	}
	tmp, err := os.MkdirTemp("", "perfscope-bisect-")
	if err != nil {
		return nil, fmt.Errorf("create build directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	b := &bisector{opts: opts, root: root, rel: rel, tmp: tmp, builds: make(map[string]*commitBuild), uncounted: make(map[benchKey][]string)}
	defer b.closeAll()

	r := &BisectResult{Good: good, Bad: bad, Unit: opts.Unit, Threshold: opts.Threshold, Bench: opts.Bench, PathCommits: len(path)}
	defer func() { r.Elapsed = time.Since(start) }()

	// The ends, every matching benchmark.
	goodStep, goodVals, err := b.measure(ctx, good.PathCommit, "good", nil)
	if err != nil {
		return nil, err
	}
	if goodStep.Verdict == BisectSkipped {
		return nil, fmt.Errorf("%w --good %s (%s): %s", ErrBisectNotMeasured, good.Ref, gitstate.Short(good.Hash), goodStep.Reason)
	}
	badStep, badVals, err := b.measure(ctx, bad.PathCommit, "bad", nil)
	if err != nil {
		return nil, err
	}
	if badStep.Verdict == BisectSkipped {
		return nil, fmt.Errorf("%w --bad %s (%s): %s", ErrBisectNotMeasured, bad.Ref, gitstate.Short(bad.Hash), badStep.Reason)
	}
	if err := b.follow(goodVals, badVals); err != nil {
		return nil, err
	}
	for _, k := range sortedKeys(b.uncounted) {
		r.Notes = append(r.Notes, b.uncounted[k]...)
	}
	b.good = goodVals
	for _, k := range b.order {
		bm := BisectBenchmark{Package: k.pkg, Benchmark: k.name, Good: goodVals[k], Bad: badVals[k],
			Change: measure.Change(goodVals[k], badVals[k])}
		bm.Moved = b.dir[k] != 0
		r.Benchmarks = append(r.Benchmarks, bm)
		r.Moved = r.Moved || bm.Moved
	}
	goodStep.Verdict, goodStep.Values = BisectGood, b.values(goodVals)
	badStep.Verdict, badStep.Values = BisectBad, b.values(badVals)
	if !r.Moved {
		badStep.Verdict = BisectGood
	}
	r.Steps = append(r.Steps, *goodStep, *badStep)
	b.report(r.Steps[0])
	b.report(r.Steps[1])
	defer func() {
		r.Builds = len(r.Steps)
		for _, s := range r.Steps {
			if s.Verdict == BisectSkipped {
				r.Skipped = append(r.Skipped, s)
			} else {
				r.Counted++
			}
		}
	}()
	if !r.Moved {
		return r, nil
	}

	// The search, on the moved benchmarks alone.
	byHash := map[string]int{good.Hash: 0, bad.Hash: 1}
	lo, hi, err := searchPath(len(path), func(i int) (string, error) {
		if i == len(path)-1 {
			return BisectBad, nil
		}
		b.keepOnly(lastIndex(r.Steps, BisectGood), lastIndex(r.Steps, BisectBad))
		step, vals, err := b.measure(ctx, path[i], "probe", b.dir)
		if err != nil {
			return "", err
		}
		if step.Verdict != BisectSkipped {
			step.Verdict = BisectGood
			for k, d := range b.dir {
				if moved(b.good[k], vals[k], opts.Threshold, d) {
					step.Verdict = BisectBad
				}
			}
			step.Values = b.values(vals)
		}
		byHash[step.Hash] = len(r.Steps)
		r.Steps = append(r.Steps, *step)
		b.report(*step)
		return step.Verdict, nil
	})
	if err != nil {
		return r, err
	}
	firstBad := r.Steps[byHash[path[hi].Hash]]
	lastGood := r.Steps[0]
	if lo >= 0 {
		lastGood = r.Steps[byHash[path[lo].Hash]]
	}
	r.FirstBad, r.LastGood = &firstBad, &lastGood
	if hi-lo > 1 {
		r.Candidates = slices.Clone(path[lo+1 : hi+1])
	} else if firstBad.Parent != lastGood.Hash {
		r.Notes = append(r.Notes, fmt.Sprintf("--good %s is not on the first-parent path of --bad %s: the first bad commit's parent %s was not measured; it is compared with --good",
			good.Ref, bad.Ref, gitstate.Short(firstBad.Parent)))
	}
	if r.Exact() && firstBad.Parent == lastGood.Hash {
		before, after := b.builds[lastGood.Hash], b.builds[firstBad.Hash]
		if before != nil && after != nil {
			xs, notes, err := b.explain(ctx, before, after, r.Benchmarks)
			if err != nil {
				return r, err
			}
			r.Explanations, r.Notes = xs, append(r.Notes, notes...)
		}
	}
	return r, nil
}

// lastIndex returns the hash of the last step with the verdict, "" if none.
func lastIndex(steps []BisectStep, verdict string) string {
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Verdict == verdict {
			return steps[i].Hash
		}
	}
	return ""
}

// A bisector measures commits for Bisect.
type bisector struct {
	opts      BisectOptions
	root, rel string
	tmp       string
	// builds are the commits built and not yet removed, by hash: the
	// search keeps the last good and first bad ones for an explanation.
	builds map[string]*commitBuild
	// order lists the benchmarks matched at both ends; good holds their
	// values at the good commit, dir the direction each moved benchmark
	// moved (+1, -1).
	order []benchKey
	good  map[benchKey]float64
	dir   map[benchKey]int
	// uncounted are the benchmarks good or bad could not count, with
	// why: they are not followed.
	uncounted map[benchKey][]string
}

// A commitBuild is one commit checked out and its tests built.
type commitBuild struct {
	wt   *bench.Worktree
	bins []bench.Binary
	dir  string // of the binaries
	// counted are the instruction counts taken of this build, whose
	// per-function profiles explain the answer.
	counted map[benchKey]*bench.CountedBenchmark
}

func (c *commitBuild) close() {
	if c.wt != nil {
		c.wt.Remove()
	}
	os.RemoveAll(c.dir)
}

func (b *bisector) closeAll() {
	for h, c := range b.builds {
		c.close()
		delete(b.builds, h)
	}
}

// keptExcept lists the commits built but the one named.
func (b *bisector) keptExcept(hash string) []string {
	var keep []string
	for h := range b.builds {
		if h != hash {
			keep = append(keep, h)
		}
	}
	return keep
}

// sortedKeys returns the benchmarks of m in the order of their names.
func sortedKeys[V any](m map[benchKey]V) []benchKey {
	keys := make([]benchKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, c benchKey) int { return strings.Compare(a.String(), c.String()) })
	return keys
}

// keepOnly removes every build but those of the commits named.
func (b *bisector) keepOnly(hashes ...string) {
	for h, c := range b.builds {
		if !slices.Contains(hashes, h) {
			c.close()
			delete(b.builds, h)
		}
	}
}

func (b *bisector) report(s BisectStep) {
	if b.opts.Progress != nil {
		b.opts.Progress(s)
	}
}

// follow checks that the pattern matched the same benchmarks at both ends
// and chooses those that moved.
func (b *bisector) follow(good, bad map[benchKey]float64) error {
	if len(b.uncounted) > 0 {
		for k := range b.uncounted {
			delete(good, k)
			delete(bad, k)
		}
		if len(good) == 0 && len(bad) == 0 {
			k := sortedKeys(b.uncounted)[0]
			return fmt.Errorf("%w: no benchmark --bench %q matches could be counted: %s", ErrBisectNotMeasured, b.opts.Bench, b.uncounted[k][0])
		}
	}
	if len(good) == 0 && len(bad) == 0 {
		return inputErrorf("--bench %q matches no benchmark of %s at --good %s or --bad %s",
			b.opts.Bench, strings.Join(b.opts.Packages, " "), b.opts.Good, b.opts.Bad)
	}
	var onlyGood, onlyBad []benchKey
	for k := range good {
		if _, ok := bad[k]; !ok {
			onlyGood = append(onlyGood, k)
		}
	}
	for k := range bad {
		if _, ok := good[k]; !ok {
			onlyBad = append(onlyBad, k)
		} else {
			b.order = append(b.order, k)
		}
	}
	for _, ks := range [][]benchKey{onlyGood, onlyBad, b.order} {
		slices.SortFunc(ks, func(a, c benchKey) int { return strings.Compare(a.String(), c.String()) })
	}
	switch {
	case len(onlyBad) > 0:
		return inputErrorf("%s exists at --bad %s but not at --good %s: narrow --bench to benchmarks both have", keyList(onlyBad), b.opts.Bad, b.opts.Good)
	case len(onlyGood) > 0:
		return inputErrorf("%s exists at --good %s but not at --bad %s: narrow --bench to benchmarks both have", keyList(onlyGood), b.opts.Good, b.opts.Bad)
	}
	b.dir = make(map[benchKey]int)
	for _, k := range b.order {
		if moved(good[k], bad[k], b.opts.Threshold, 0) {
			b.dir[k] = 1
			if bad[k] < good[k] {
				b.dir[k] = -1
			}
		}
	}
	return nil
}

// values lists a commit's values of the followed benchmarks, in order.
func (b *bisector) values(vals map[benchKey]float64) []BisectValue {
	var out []BisectValue
	for _, k := range b.order {
		if v, ok := vals[k]; ok {
			out = append(out, BisectValue{Package: k.pkg, Benchmark: k.name, Value: v, Change: measure.Change(b.good[k], v)})
		}
	}
	return out
}

// measure builds commit c and measures the benchmarks the pattern matches
// there (only those in follow, when it is not nil). A commit that cannot
// be measured is a step with Verdict BisectSkipped and its Reason; the
// error is for what stops the whole bisection (cancellation). The step's
// other verdicts are the caller's to give.
func (b *bisector) measure(ctx context.Context, c gitstate.PathCommit, role string, follow map[benchKey]int) (*BisectStep, map[benchKey]float64, error) {
	start := time.Now()
	step := &BisectStep{PathCommit: c, Role: role}
	b.report(*step)
	skip := func(format string, args ...any) (*BisectStep, map[benchKey]float64, error) {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		step.Verdict, step.Reason, step.Elapsed = BisectSkipped, fmt.Sprintf(format, args...), time.Since(start)
		return step, nil, nil
	}
	cb, reason, err := b.build(ctx, c.Hash)
	if err != nil || reason != "" {
		b.keepOnly(b.keptExcept(c.Hash)...)
		if err != nil {
			return nil, nil, err
		}
		return skip("%s", reason)
	}
	raw, err := bench.RunInterleaved(ctx, bench.InterleaveOptions{Head: cb.bins, Rounds: 1, Bench: b.opts.Bench, Benchtime: b.opts.Benchtime})
	if err != nil {
		return skip("its benchmarks failed: %s", firstLine(err.Error()))
	}
	ordinary, err := bench.Parse(bytes.NewReader(raw.Head), gitstate.Short(c.Hash))
	if err != nil {
		return nil, nil, err
	}
	byKey := make(map[benchKey][]*benchfmt.Result)
	for _, res := range ordinary.Results {
		k := benchKey{res.GetConfig("pkg"), res.Name.String()}
		if follow == nil || follow[k] != 0 {
			byKey[k] = append(byKey[k], res)
		}
	}
	var missing []benchKey
	for k := range follow {
		if len(byKey[k]) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return skip("its test binary has no %s", keyList(missing))
	}
	measured := &bench.Results{Units: make(benchfmt.UnitMetadataMap)}
	vals := make(map[benchKey]float64)
	var counted []*bench.CountedBenchmark
	if b.opts.Unit == bench.UnitInstructions {
		kept := &bench.Results{}
		for _, k := range sortedKeys(byKey) {
			kept.Results = append(kept.Results, byKey[k]...)
		}
		for _, bin := range cb.bins {
			cs, err := bench.CountBenchmarks(ctx, bin, kept, 1, b.opts.Instructions, nil)
			if err != nil {
				return nil, nil, err
			}
			counted = append(counted, cs...)
		}
		for _, cnt := range counted {
			k := benchKey{cnt.Result.GetConfig("pkg"), cnt.Result.Name.String()}
			if cnt.Err != nil && follow == nil {
				// At the ends, a benchmark that cannot be counted
				// (blocking system calls, a crash under valgrind) is
				// left out, not the bisection.
				b.uncounted[k] = append(b.uncounted[k], fmt.Sprintf("%s is not followed: at %s it could not be counted: %s", k, gitstate.Short(c.Hash), firstLine(cnt.Err.Error())))
				continue
			}
			if cnt.Err != nil {
				return skip("%s could not be counted: %s", k, firstLine(cnt.Err.Error()))
			}
			vals[k] = cnt.PerOp()
			if cb.counted == nil {
				cb.counted = make(map[benchKey]*bench.CountedBenchmark)
			}
			cb.counted[k] = cnt
		}
		var buf bytes.Buffer
		if err := bench.WriteInstructions(&buf, counted); err != nil {
			return nil, nil, err
		}
		if measured, err = bench.Parse(&buf, "instruction counts"); err != nil {
			return nil, nil, err
		}
	} else {
		for _, k := range sortedKeys(byKey) {
			var xs []float64
			for _, res := range byKey[k] {
				if v, ok := res.Value(b.opts.Unit); ok {
					xs = append(xs, v)
					only := res.Clone()
					only.Values = []benchfmt.Value{{Value: v, Unit: b.opts.Unit, OrigValue: v, OrigUnit: b.opts.Unit}}
					measured.Results = append(measured.Results, only)
				}
			}
			if len(xs) == 0 {
				return skip("%s reports no %s", k, b.opts.Unit)
			}
			vals[k] = measure.Center(xs)
		}
	}
	meta, err := bench.Environment(ctx, cb.wt.Dir)
	if err != nil {
		return nil, nil, err
	}
	step.Record = &bench.RunRecord{Meta: meta, Results: measured, Counted: counted}
	step.Elapsed = time.Since(start)
	return step, vals, nil
}

// build checks out commit and builds the test binaries of the packages.
// reason says why the commit cannot be built, the error is for what stops
// the bisection.
func (b *bisector) build(ctx context.Context, commit string) (*commitBuild, string, error) {
	wt, err := bench.AddWorktree(ctx, b.root, commit)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, "", err
	}
	cb := &commitBuild{wt: wt}
	b.builds[commit] = cb
	if cb.dir, err = os.MkdirTemp(b.tmp, gitstate.Short(commit)+"-"); err != nil {
		return nil, "", fmt.Errorf("create build directory: %w", err)
	}
	dir := filepath.Join(wt.Dir, b.rel)
	if _, err := os.Stat(dir); err != nil {
		return nil, "the module directory " + filepath.ToSlash(b.rel) + " does not exist there", nil
	}
	pkgs, err := bench.ListPackages(ctx, dir, b.opts.Packages)
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	if err != nil {
		return nil, "does not build: " + firstLine(err.Error()), nil
	}
	if len(pkgs) == 0 {
		return nil, "no package with tests matches " + strings.Join(b.opts.Packages, " "), nil
	}
	var paths []string
	for _, p := range pkgs {
		paths = append(paths, p.ImportPath)
	}
	cb.bins, _, err = bench.BuildTests(ctx, gitstate.Short(commit), dir, paths, cb.dir)
	var be *bench.BuildError
	switch {
	case ctx.Err() != nil:
		return nil, "", ctx.Err()
	case errors.As(err, &be):
		return nil, "does not build: " + firstLine(be.Output), nil
	case err != nil:
		return nil, "does not build: " + firstLine(err.Error()), nil
	}
	return cb, "", nil
}

// firstLine is the first line of s that says something, for one-line
// reasons.
func firstLine(s string) string {
	for l := range strings.Lines(s) {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return strings.TrimSpace(s)
}

// explain says where each moved benchmark's measure changed between the
// builds of the last good commit and the first bad one: from the counts
// already taken for instructions/op, from allocations recorded on both
// builds for allocs/op and B/op. A benchmark that cannot be explained
// gets a note; the error is only for cancellation.
func (b *bisector) explain(ctx context.Context, before, after *commitBuild, benchmarks []BisectBenchmark) ([]Explanation, []string, error) {
	var out []Explanation
	var notes []string
	for _, bm := range benchmarks {
		if !bm.Moved {
			continue
		}
		k := benchKey{bm.Package, bm.Benchmark}
		if b.opts.Unit == bench.UnitInstructions {
			if e := Explain(before.counted[k], after.counted[k], 0); e != nil {
				e.Package, e.Benchmark = bm.Package, bm.Benchmark
				out = append(out, *e)
			} else {
				notes = append(notes, fmt.Sprintf("where %s Benchmark%s's instructions changed is not known: a count has no profile", bm.Package, bm.Benchmark))
			}
			continue
		}
		beforeBin, okBefore := binaryOf(before.bins, bm.Package)
		afterBin, okAfter := binaryOf(after.bins, bm.Package)
		if !okBefore || !okAfter {
			continue
		}
		es, note, err := explainAllocationsOf(ctx, beforeBin, afterBin, bm.Package, bm.Benchmark, []string{b.opts.Unit}, allocOperations(math.NaN()), 0)
		if err != nil {
			return out, notes, err
		}
		out = append(out, es...)
		if note != "" {
			notes = append(notes, note)
		}
	}
	return out, notes, nil
}

// binaryOf returns the test binary of package pkg among bins.
func binaryOf(bins []bench.Binary, pkg string) (bench.Binary, bool) {
	for _, bin := range bins {
		if bin.Package.ImportPath == pkg {
			return bin, true
		}
	}
	return bench.Binary{}, false
}
