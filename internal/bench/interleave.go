package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A Binary is a compiled test binary of one package in one tree.
type Binary struct {
	Package Package
	// Path is the executable; Package.Dir is where it runs, as "go test"
	// runs tests in their package directory.
	Path string
}

// BuildError reports a package whose tests do not compile.
type BuildError struct {
	Tree, Package string
	Output        string
}

func (e *BuildError) Error() string {
	if e.Tree == "" {
		return fmt.Sprintf("%s does not build:\n%s", e.Package, e.Output)
	}
	return fmt.Sprintf("%s: %s does not build:\n%s", e.Tree, e.Package, e.Output)
}

// testBinaryPath is where the test binary of the i-th package built in
// dir goes: tree-i.test, or i.test when there is no tree to name.
func testBinaryPath(dir, tree string, i int) string {
	name := strconv.Itoa(i) + ".test"
	if tree != "" {
		name = tree + "-" + name
	}
	return filepath.Join(dir, name)
}

// BuildTests compiles the test binary ("go test -c") of each package,
// given as import paths, in the module at dir. Packages that do not exist
// there are returned in missing, not as errors: a benchmark new in the
// head has no base. tree names the tree in errors ("base", "head").
func BuildTests(ctx context.Context, tree, dir string, importPaths []string, outDir string) (bins []Binary, missing []string, err error) {
	pkgs, err := listByPath(ctx, dir, importPaths)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", tree, err)
	}
	for i, path := range importPaths {
		pkg, ok := pkgs[path]
		if !ok {
			missing = append(missing, path)
			continue
		}
		bin := Binary{Package: pkg, Path: testBinaryPath(outDir, tree, i)}
		if err := buildTest(ctx, dir, bin); err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			var be *BuildError
			if errors.As(err, &be) {
				be.Tree = tree
			}
			return nil, nil, err
		}
		// A package with tests but no test functions builds no binary.
		if _, err := os.Stat(bin.Path); err != nil {
			missing = append(missing, path)
			continue
		}
		bins = append(bins, bin)
	}
	return bins, missing, nil
}

// buildTest compiles the test binary of bin.Package, run from dir, to
// bin.Path. A package that has test files but no tests builds nothing
// and no error.
func buildTest(ctx context.Context, dir string, bin Binary) error {
	out, err := command(ctx, dir, "go", "test", "-c", "-o", bin.Path, bin.Package.ImportPath).CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &BuildError{Package: bin.Package.ImportPath, Output: firstLines(strings.TrimSpace(string(out)), 15)}
	}
	return nil
}

func listByPath(ctx context.Context, dir string, importPaths []string) (map[string]Package, error) {
	out, err := output(ctx, dir, "go", append([]string{"list", "-e", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{if .Error}}error{{else}}ok{{end}}"}, importPaths...)...)
	if err != nil {
		return nil, fmt.Errorf("list packages: %w", err)
	}
	m := make(map[string]Package)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) == 3 && f[2] == "ok" && f[1] != "" {
			m[f[0]] = Package{ImportPath: f[0], Dir: f[1]}
		}
	}
	return m, nil
}

// InterleaveOptions configure an interleaved A/B run.
type InterleaveOptions struct {
	// Base and Head are the binaries; they are paired by import path.
	Base, Head []Binary
	// Rounds is how many times each side runs every benchmark (each
	// round is one -count 1 run per package and side).
	Rounds int
	// FirstRound numbers the first round (default 1), so that a run
	// extended by more rounds keeps counting and alternating.
	FirstRound int
	// Bench is the -test.bench expression; Benchtime the
	// -test.benchtime.
	Bench, Benchtime string
	// Progress, if set, is called as benchmarks start and finish.
	Progress func(Progress)
	// Warm carries, from one call to the next, the binaries (by path)
	// that run every benchmark twice and keep the second; nil starts
	// afresh. See RunInterleaved.
	Warm map[string]bool
}

// Interleaved holds what an interleaved run measured, per side, in Go
// benchmark format (one file per side, which benchstat reads).
type Interleaved struct {
	Base, Head []byte
	// Cold names the benchmarks whose first operation in a process took
	// longer than the whole benchtime, so that their result was that one
	// cold operation: it is discarded, and they are measured warm.
	Cold []string
}

// Save writes the raw output as dir/base.txt and dir/head.txt, files that
// benchstat and 'perfscope compare' read.
func (r *Interleaved) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save raw results: %w", err)
	}
	for name, data := range map[string][]byte{"base.txt": r.Base, "head.txt": r.Head} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("save raw results: %w", err)
		}
	}
	return nil
}

// RunInterleaved runs base and head binaries alternately, round after
// round, so that machine drift (thermal state, other tenants, frequency
// scaling) hits both sides equally instead of biasing one. Within a round
// the side that goes first alternates (base, head, head, base, ...) so
// that neither side always runs just after the other's warm-up.
//
// A benchmark whose first operation takes longer than a benchtime given
// as a duration runs once and reports that operation, measured cold (a
// cache filled, a pool grown, code paged in): 68 ms/op where the warm
// operation takes 775 ns. Such a result is discarded, the benchmark named
// in Cold, and from then on its binary runs with -test.count 2 and only
// each benchmark's second result is kept — measured after one whole run
// warmed the process. opts.Warm carries that across calls.
func RunInterleaved(ctx context.Context, opts InterleaveOptions) (*Interleaved, error) {
	heads := make(map[string]Binary)
	for _, b := range opts.Head {
		heads[b.Package.ImportPath] = b
	}
	var out Interleaved
	var base, head bytes.Buffer
	type pair struct{ base, head Binary }
	var pairs []pair
	for _, b := range opts.Base {
		if h, ok := heads[b.Package.ImportPath]; ok {
			pairs = append(pairs, pair{b, h})
		}
	}
	// Head-only packages still run, so new benchmarks are reported.
	for _, h := range opts.Head {
		found := false
		for _, p := range pairs {
			found = found || p.head.Package.ImportPath == h.Package.ImportPath
		}
		if !found {
			pairs = append(pairs, pair{head: h})
		}
	}
	args := []string{"-test.run", "^$", "-test.bench", opts.Bench, "-test.benchmem"}
	if opts.Benchtime != "" {
		args = append(args, "-test.benchtime", opts.Benchtime)
	}
	byDuration := !strings.HasSuffix(opts.Benchtime, "x")
	warm := opts.Warm
	if warm == nil {
		warm = make(map[string]bool)
	}
	cold := make(map[string]bool)
	first := max(opts.FirstRound, 1)
	for round := first; round < first+opts.Rounds; round++ {
		for i, p := range pairs {
			sides := []string{"base", "head"}
			if round%2 == 0 {
				sides = []string{"head", "base"}
			}
			for _, side := range sides {
				bin, buf := p.base, &base
				if side == "head" {
					bin, buf = p.head, &head
				}
				if bin.Path == "" {
					continue
				}
				ev := Progress{Package: bin.Package.ImportPath, PackageIndex: i + 1, Packages: len(pairs), Rounds: first + opts.Rounds - 1, Side: side}
				var report func(Progress)
				if opts.Progress != nil {
					report = func(p Progress) {
						p.Round = round
						opts.Progress(p)
					}
				}
				count := "1"
				if warm[bin.Path] {
					count = "2"
				}
				var got bytes.Buffer
				err := runBinary(ctx, bin, append(args, "-test.count", count), newProgressWriter(&got, ev, report), nil)
				kept, coldNow := warmResults(got.Bytes(), warm[bin.Path], byDuration)
				buf.Write(kept)
				for _, name := range coldNow {
					cold[name] = true
					warm[bin.Path] = true
				}
				if err != nil {
					out.Base, out.Head, out.Cold = base.Bytes(), head.Bytes(), sortedKeys(cold)
					return &out, fmt.Errorf("%s round %d: %w", side, round, err)
				}
			}
		}
	}
	out.Base, out.Head, out.Cold = base.Bytes(), head.Bytes(), sortedKeys(cold)
	return &out, nil
}

// warmResults keeps what one run of a test binary measured warm. A run
// with -test.count 2 (twice) keeps each benchmark's second result only.
// Otherwise, when the benchtime is a duration, a result of one iteration
// was one cold operation longer than the benchtime: it is dropped and
// named in cold. Every line that is not a result is kept as it is.
func warmResults(out []byte, twice, byDuration bool) (kept []byte, cold []string) {
	seen := make(map[string]bool)
	var b bytes.Buffer
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			b.Write(line)
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			b.Write(line)
			continue
		}
		name := f[0]
		switch {
		case twice && !seen[name]:
			seen[name] = true
			continue
		case !twice && byDuration && f[1] == "1":
			cold = append(cold, name)
			continue
		}
		b.Write(line)
	}
	return b.Bytes(), cold
}

// mergeSorted returns the sorted union of two sorted lists.
func mergeSorted(a, b []string) []string {
	m := make(map[string]bool, len(a)+len(b))
	for _, s := range append(a, b...) {
		m[s] = true
	}
	return sortedKeys(m)
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// runBinary runs a test binary in its package's directory, as "go test"
// does, with its standard output to w as it arrives and its standard error
// to log (nil discards it). A failure is an error with what the binary said
// about it.
func runBinary(ctx context.Context, bin Binary, args []string, w, log io.Writer) error {
	cmd := command(ctx, bin.Package.Dir, bin.Path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = io.MultiWriter(w, &stdout)
	cmd.Stderr = &stderr
	if log != nil {
		cmd.Stderr = io.MultiWriter(&stderr, log)
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String() + "\n" + failureLines(stdout.String()))
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("benchmarks of %s failed (exit %s): %s", bin.Package.ImportPath, strconv.Itoa(ee.ExitCode()), firstLines(msg, 15))
		}
		return fmt.Errorf("run benchmarks of %s: %w", bin.Package.ImportPath, err)
	}
	return nil
}

// failureLines keeps the lines of test output that explain a failure,
// dropping result lines.
func failureLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Benchmark") && strings.Contains(l, "/op") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}
