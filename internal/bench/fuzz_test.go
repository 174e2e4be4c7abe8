package bench

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// FuzzParse feeds arbitrary text to the reading path every perfscope
// command uses. It must never panic or fail; every result it keeps must
// have values with units, every skipped line must be named by a line of
// the input, and writing the results back must read back as many.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../benchstats/testdata/*.txt")
	for _, s := range seeds {
		// A fixture's first lines, not the whole file: the fuzzer
		// minimizes every input that finds new code one byte at a time,
		// and kilobyte seeds keep it minimizing instead of fuzzing.
		if data, err := os.ReadFile(s); err == nil {
			lines := bytes.SplitAfter(data, []byte("\n"))
			f.Add(bytes.Join(lines[:min(8, len(lines))], nil))
		}
	}
	f.Add([]byte("BenchmarkX-2 \t 1 \t 1 ns/op\nUnit ns/op assume=exact\nBenchmarkY 5 5 B/op 3\n"))
	f.Add([]byte("commit: abc\nBenchmark\nBenchmarkZ 1\n"))
	f.Add([]byte("BenchmarkN-2 1 NaN ns/op\nBenchmarkN-2 1 nan B/op\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Inputs are cut, not skipped: a branch taken only by long
		// inputs would be new coverage, and the fuzzer would spend its
		// time minimizing a long input one byte at a time.
		data = data[:min(len(data), 4<<10)]
		res, err := Parse(bytes.NewReader(data), "fuzz.txt")
		if err != nil {
			// Only a line longer than the scanner's buffer fails a read.
			if !strings.Contains(err.Error(), "too long") {
				t.Fatalf("read error on in-memory input: %v", err)
			}
			return
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, w := range res.Warnings {
			se, ok := w.(*benchfmt.SyntaxError)
			if !ok || se.Line < 1 || se.Line > lines || se.FileName != "fuzz.txt" {
				t.Fatalf("warning %v does not name a line of the input", w)
			}
		}
		var buf bytes.Buffer
		wr := benchfmt.NewWriter(&buf)
		for _, r := range res.Results {
			// benchfmt accepts odd but parseable lines
			// ("Benchmark 0 0 0") as benchstat does; what
			// must hold is that a kept result has values.
			if len(r.Values) == 0 || r.Iters < 0 {
				t.Fatalf("kept a malformed result: %+v", r)
			}
			for _, v := range r.Values {
				if v.Unit == "" || math.IsNaN(v.Value) {
					t.Fatalf("kept value %v %q in %s", v.Value, v.Unit, r.Name)
				}
			}
			if err := wr.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		again, err := Parse(&buf, "again.txt")
		if err != nil || len(again.Results) != len(res.Results) {
			t.Fatalf("round trip: %d results, want %d (err %v)", len(again.Results), len(res.Results), err)
		}
	})
}

// FuzzValgrindOutputs feeds arbitrary text to the readers of valgrind's
// log and cachegrind's output file. They must never panic; a blocking call
// is only counted from a line that logs one, the messages kept hold no
// system-call line, and a total is only read from a summary line.
func FuzzValgrindOutputs(f *testing.F) {
	f.Add([]byte("==1== Cachegrind, a cache and branch-prediction profiler\n" +
		"SYSCALL[1,1](1) sys_write ( 9, 0x3f0c28704000, 88 ) --> [async] ... \n" +
		"SYSCALL[1,1](1) ... [async] --> Success(0x58) \n" +
		"SYSCALL[1,2](202) sys_futex ( 0xcdd580, 128, 0, 0x4bcfcd28, 0x0 ) --> [async] ... \n" +
		"==1== I   refs:      194,237,900\n"))
	f.Add([]byte("desc: I1 cache: 32768 B\ncmd: ./x.test\nevents: Ir\nfl=a.go\nfn=main\n1 5\nsummary: 194237900\n"))
	f.Add([]byte("summary: -1\nsummary:\nsummary: 99999999999999999999\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		data = data[:min(len(data), 4<<10)] // cut, as in FuzzParse
		path := filepath.Join(t.TempDir(), "out")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		asyncCalls := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "SYSCALL[") && strings.HasSuffix(strings.TrimSpace(l), "--> [async] ...") {
				asyncCalls++
			}
		}
		blocking, msgs, err := readValgrindLog(path)
		if err != nil {
			t.Fatalf("reading a short log: %v", err)
		}
		if blocking < 0 || blocking > int64(asyncCalls) {
			t.Fatalf("%d blocking calls from %d lines logging a call", blocking, asyncCalls)
		}
		for _, l := range strings.Split(msgs, "\n") {
			if strings.HasPrefix(l, "SYSCALL[") {
				t.Fatalf("kept system-call line %q as a message", l)
			}
		}
		cf, err := readCachegrind(path)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		found := false
		for _, l := range lines {
			if rest, ok := strings.CutPrefix(l, "summary:"); ok {
				n, err := strconv.ParseInt(append(strings.Fields(rest), "")[0], 10, 64)
				found = err == nil && n == cf.Total
			}
		}
		if !found {
			t.Fatalf("total %d read from no summary line", cf.Total)
		}
	})
}
