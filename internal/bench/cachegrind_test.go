package bench

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readCachegrindFixture(t testing.TB, name string) *CachegrindFile {
	t.Helper()
	cf, err := readCachegrind(filepath.Join("testdata", "cachegrind", name))
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

// TestParseCachegrind reads real output files of a Go test binary and of a
// C program: every instruction of the summary lands in one function and
// one line.
func TestParseCachegrind(t *testing.T) {
	for name, want := range map[string]struct {
		total int64
		fn    string
		calls int64
	}{
		"work-2x.out":  {2500234, "example.com/cgx.hot", 56014},
		"work-10x.out": {2717533, "example.com/cgx.hot", 280070},
		"true.out":     {-1, "__libc_start_main@@GLIBC_2.34", -1},
	} {
		cf := readCachegrindFixture(t, name)
		if want.total >= 0 && cf.Total != want.total {
			t.Errorf("%s: total %d, want %d", name, cf.Total, want.total)
		}
		var funcs, lines int64
		for _, c := range cf.Funcs {
			funcs += c
		}
		for _, c := range cf.Lines {
			lines += c
		}
		if funcs != cf.Total || lines != cf.Total {
			t.Errorf("%s: functions add up to %d, lines to %d, the summary is %d", name, funcs, lines, cf.Total)
		}
		if c, ok := cf.Funcs[want.fn]; !ok || want.calls >= 0 && c != want.calls {
			t.Errorf("%s: %s counted %d (%v), want %d", name, want.fn, c, ok, want.calls)
		}
	}
	cf := readCachegrindFixture(t, "work-10x.out")
	if c := cf.Lines[SourceLine{Func: "example.com/cgx.hot", File: "/tmp/cgx/work_test.go", Line: 11}]; c != 160000 {
		t.Errorf("work_test.go:11 in hot counted %d, want 160000", c)
	}
}

// TestOpProfile takes the difference of the real runs of 2 and 10
// operations: hot's 28,007 instructions a call, the lines of the loop,
// their text where the file is at hand, and the module's files named
// relative to its root.
func TestOpProfile(t *testing.T) {
	short, long := readCachegrindFixture(t, "work-2x.out"), readCachegrindFixture(t, "work-10x.out")
	// The binary was built in /tmp/cgx; put its source there to be read.
	root := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "cachegrind", "work_test.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Paths in the files are absolute: rename them to the temporary root.
	rename := func(cf *CachegrindFile) {
		lines := make(map[SourceLine]int64, len(cf.Lines))
		for l, c := range cf.Lines {
			l.File = strings.Replace(l.File, "/tmp/cgx", root, 1)
			lines[l] += c
		}
		cf.Lines = lines
	}
	rename(short)
	rename(long)
	if err := os.WriteFile(filepath.Join(root, "work_test.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	p := opProfile(short, long, 8, root)
	if got := p.Funcs["example.com/cgx.hot"]; got != 28007 {
		t.Errorf("hot: %v instructions an operation, want 28007", got)
	}
	var sum, lineSum float64
	for _, v := range p.Funcs {
		sum += v
	}
	for _, v := range p.Lines {
		lineSum += v
	}
	perOp := float64(long.Total-short.Total) / 8
	if sum != perOp || lineSum != perOp {
		t.Errorf("functions add up to %v, lines to %v, the count is %v", sum, lineSum, perOp)
	}
	loop := SourceLine{Func: "example.com/cgx.hot", File: "work_test.go", Line: 11}
	if got := p.Lines[loop]; got != 16000 {
		t.Errorf("work_test.go:11: %v an operation, want 16000", got)
	}
	if got := p.Source[loop]; got != "s += i % 7" {
		t.Errorf("work_test.go:11 reads %q", got)
	}
	for l := range p.Lines {
		if strings.Contains(l.File, root) {
			t.Errorf("%s keeps the module's directory", l.File)
		}
	}
}

func TestParseCachegrindRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"events: Ir\nfl=a.go\nfn=f\n1 5\n", "no summary"},
		{"events: Ir\nfl=a.go\nfn=f\n1 5\nsummary: 6\n", "its lines count 5 instructions, its summary 6"},
		{"fl=a.go\nfn=f\n1 5\nsummary: 5\n", "line 3: counts before"},
		{"events: Dr\nsummary: 5\n", "do not count instructions"},
		{"events: Ir\n1 5\n", "outside a file"},
		{"events: Ir\nfl=a.go\nfn=f\n1 x\n", "count \"x\""},
		{"events: Ir\nfl=a.go\nfn=f\n1 -3\n", "count \"-3\""},
		{"<html>\n", "not cachegrind output"},
		{"events: Ir\nfl=a.go\nfn=" + strings.Repeat("x", maxCachegrindLine) + "\n", "longer than"},
	} {
		_, err := ParseCachegrind(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", firstBytes(tc.in, 40), err, tc.want)
		}
	}
	_, err := ParseCachegrind(strings.NewReader("events: Ir\nfl=a.go\nfn=" + strings.Repeat("x", maxCachegrindLine) + "\n"))
	if !errors.Is(err, errCachegrindCap) {
		t.Errorf("a long line: %v, want the cap's error", err)
	}
}

// FuzzCachegrind feeds arbitrary text to the cachegrind reader, seeded
// with real output files. It must never panic; what it reads must add up:
// the functions' and the lines' counts to the summary, no count negative.
func FuzzCachegrind(f *testing.F) {
	for _, name := range []string{"work-2x.out", "true.out"} {
		data, err := os.ReadFile(filepath.Join("testdata", "cachegrind", name))
		if err != nil {
			f.Fatal(err)
		}
		// The head of a real file and its summary line: whole files
		// keep the fuzzer minimizing instead of fuzzing (see FuzzParse).
		lines := bytes.SplitAfter(data, []byte("\n"))
		f.Add(append(bytes.Join(lines[:min(24, len(lines))], nil), lines[len(lines)-2]...))
	}
	// One real function's block of work-10x.out with its own total.
	f.Add([]byte("events: Ir\nfl=/tmp/cgx/work_test.go\nfn=example.com/cgx.hot\n10 120050\n11 160000\n13 20\nsummary: 280070\n"))
	f.Add([]byte("events: Dr Ir\nfl=a.go\nfn=f\n1 5 6\n2 7\nsummary: 12 6\n"))
	// The head of a real callgrind thread file (work-10x.out-01): a
	// call's cost line, inlined code, then its summary.
	f.Add([]byte("# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npart: 1\nthread: 1\npositions: line\nevents: Ir\nsummary: 596\n" +
		"ob=/tmp/cgw/cgx.test\nfl=/usr/local/go/src/runtime/mbarrier.go\nfn=internal/runtime/maps.typedmemmove\n235 60\n236 12\n" +
		"cfn=runtime.typedmemmove\ncalls=12 150\n236 400\nfi=/usr/local/go/src/runtime/stubs.go\n37 24\nfe=/usr/local/go/src/runtime/mbarrier.go\n237 500\ntotals: 596\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		data = data[:min(len(data), 4<<10)] // cut, as in FuzzParse
		cf, err := ParseCachegrind(bytes.NewReader(data))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		var funcs, lines int64
		for fn, c := range cf.Funcs {
			if c < 0 || fn == "" {
				t.Fatalf("function %q counted %d", fn, c)
			}
			funcs += c
		}
		for l, c := range cf.Lines {
			if c < 0 || l.Line < 0 {
				t.Fatalf("line %+v counted %d", l, c)
			}
			lines += c
		}
		if funcs != cf.Total || lines != cf.Total {
			t.Fatalf("functions add up to %d, lines to %d, the summary is %d", funcs, lines, cf.Total)
		}
	})
}

// callgrindFixture writes the gzipped per-thread files of a real callgrind
// run (testdata/callgrind/NAME.out-NN.gz) to a temporary directory as
// callgrind wrote them and returns their common prefix.
func callgrindFixture(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	paths, err := filepath.Glob(filepath.Join("testdata", "callgrind", name+".out-*.gz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixture %s: %v", name, err)
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, strings.TrimSuffix(filepath.Base(p), ".gz")), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name+".out")
}

// TestReadCallgrindThreads reads real per-thread callgrind files: the
// system monitor's thread is set apart, a call's cost line is not counted
// again in its caller, and the difference of the runs of 2 and 10
// operations gives hot's 28,007 instructions a call, as cachegrind counted
// them.
func TestReadCallgrindThreads(t *testing.T) {
	short, shortMonitor, err := readCallgrindThreads(callgrindFixture(t, "work-2x"))
	if err != nil {
		t.Fatal(err)
	}
	long, longMonitor, err := readCallgrindThreads(callgrindFixture(t, "work-10x"))
	if err != nil {
		t.Fatal(err)
	}
	if shortMonitor != 2090 || longMonitor != 2460 {
		t.Errorf("monitor threads counted %d and %d, want 2090 and 2460", shortMonitor, longMonitor)
	}
	if short.Total != 2433826+5824 || long.Total != 2673048+5720 {
		t.Errorf("totals %d and %d, want the other two threads' %d and %d", short.Total, long.Total, 2433826+5824, 2673048+5720)
	}
	if _, ok := long.Funcs[monitorFunc]; ok {
		t.Errorf("the monitor's function is counted: %d", long.Funcs[monitorFunc])
	}
	for _, cf := range []*CachegrindFile{short, long} {
		var sum int64
		for _, c := range cf.Funcs {
			sum += c
		}
		if sum != cf.Total {
			t.Errorf("functions add up to %d, the threads' summaries to %d", sum, cf.Total)
		}
	}
	// BenchmarkWork calls hot 12 times in the longer run; its own lines
	// are a few instructions an operation, not hot's.
	if c := long.Funcs["example.com/cgx.BenchmarkWork"]; c <= 0 || c > 1000 {
		t.Errorf("BenchmarkWork's own count %d: a call's cost line was counted in the caller", c)
	}
	p := opProfile(short, long, 8, "")
	if got := p.Funcs["example.com/cgx.hot"]; got != 28007 {
		t.Errorf("hot: %v instructions per operation, want 28007", got)
	}
	if got := p.Lines[SourceLine{Func: "example.com/cgx.hot", File: "/tmp/cgw/work_test.go", Line: 11}]; got != 16000 {
		t.Errorf("hot's line 11: %v instructions per operation, want 16000", got)
	}
}

// TestParseCallgrindRefuses: a call's cost line must follow its "calls="
// line, and positions other than source lines are refused.
func TestParseCallgrindRefuses(t *testing.T) {
	for _, in := range []string{
		"events: Ir\nfl=a.go\nfn=f\ncalls=1 2\n",
		"events: Ir\nfl=a.go\nfn=f\ncalls=1 2\nfn=g\n3 4\nsummary: 4\n",
		"positions: instr line\nevents: Ir\nfl=a.go\nfn=f\n0x10 3 4\nsummary: 4\n",
		"events: Ir\nfi=b.go\nfl=a.go\nfn=f\n3 4\nsummary: 4\n",
	} {
		if _, err := ParseCachegrind(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	cf, err := ParseCachegrind(strings.NewReader("events: Ir\nfl=a.go\nfn=f\n1 3\nfi=b.go\n7 2\ncfn=g\ncalls=1 9\n7 100\nfe=a.go\n2 1\nfn=g\n9 100\nsummary: 106\ntotals: 106\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cf.Funcs["f"] != 6 || cf.Funcs["g"] != 100 || cf.Lines[SourceLine{Func: "f", File: "b.go", Line: 7}] != 2 || cf.Lines[SourceLine{Func: "f", File: "a.go", Line: 2}] != 1 {
		t.Errorf("counts %v, lines %v", cf.Funcs, cf.Lines)
	}
}
