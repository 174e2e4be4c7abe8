package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Caps of a cachegrind output file. A Go test binary's run writes about
// 170 KB: 16,000 lines, 2,100 functions in 260 files. The caps are two
// orders of magnitude above that and keep a broken or hostile file from
// costing more than a few hundred MiB.
const (
	// maxCachegrindBytes bounds the file, in bytes.
	maxCachegrindBytes = 256 << 20
	// maxCachegrindLine bounds a line, in bytes (a function or file
	// name with its prefix).
	maxCachegrindLine = 64 << 10
	// maxCachegrindLines bounds the distinct source lines counted.
	maxCachegrindLines = 4_000_000
	// maxCachegrindFuncs bounds the distinct functions counted.
	maxCachegrindFuncs = 500_000
)

// errCachegrindCap is the error of a cachegrind file beyond a cap.
var errCachegrindCap = errors.New("beyond perfscope's limits")

// A SourceLine is a line of source as cachegrind names it: the function
// the line's instructions belong to (inlined code belongs to the function
// it is inlined into), the file and the line number.
type SourceLine struct {
	Func string
	File string
	Line int
}

// A CachegrindFile is what one cachegrind output file counted: every
// instruction of the program, by function and by source line.
type CachegrindFile struct {
	// Total is the program's instructions (the file's "summary:" line).
	Total int64
	// Funcs are the instructions of each function, Lines of each line;
	// both add up to Total.
	Funcs map[string]int64
	Lines map[SourceLine]int64
}

// ParseCachegrind reads one output file of valgrind's cachegrind
// (--tool=cachegrind, format "events: Ir ...") or of one thread of its
// callgrind (--tool=callgrind with --compress-strings=no and
// --compress-pos=no, which write the same format with call lines): its
// "fl=" and "fn=" lines name the file and function of the count lines that
// follow ("fi=" and "fe=" the file of inlined code), "LINE COUNT ..." in
// the order of the "events:" line, of which the instructions (Ir) are
// kept. A call's cost line (the one after "calls=") is the callee's, which
// its own lines count, and is skipped. Instructions valgrind could not
// place in a function ("???") are counted under that name. The file is
// read as a stream and refused at the first line beyond a cap (bytes, line
// length, distinct functions, distinct lines) or that is not of the
// format, naming it; the per-function and per-line counts must add up to
// the summary.
func ParseCachegrind(r io.Reader) (*CachegrindFile, error) {
	lr := &io.LimitedReader{R: r, N: maxCachegrindBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 64<<10), maxCachegrindLine)
	cf := &CachegrindFile{Total: -1, Funcs: make(map[string]int64), Lines: make(map[SourceLine]int64)}
	ir := -1                     // the column of Ir in count lines
	var file, defined, fn string // defined: the file of fn ("fl=")
	var sum int64
	inclusive := false // the next count line is a call's
	n := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("cachegrind output, line %d: "+format, append([]any{n}, args...)...)
	}
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case l == "":
		case l[0] >= '0' && l[0] <= '9':
			if ir < 0 {
				return nil, bad("counts before an \"events:\" line")
			}
			if fn == "" || file == "" {
				return nil, bad("counts outside a file and function")
			}
			f := strings.Fields(l)
			line, err := strconv.Atoi(f[0])
			if err != nil || line < 0 {
				return nil, bad("line number %q", f[0])
			}
			if inclusive {
				inclusive = false
				continue
			}
			// Columns left out at the end of a line are zero.
			if ir+1 >= len(f) {
				continue
			}
			c, err := strconv.ParseInt(f[ir+1], 10, 64)
			if err != nil || c < 0 {
				return nil, bad("count %q", f[ir+1])
			}
			if c > (1<<62)-sum {
				return nil, bad("counts beyond 2^62 instructions")
			}
			sum += c
			k := SourceLine{Func: fn, File: file, Line: line}
			if _, ok := cf.Lines[k]; !ok && len(cf.Lines) >= maxCachegrindLines {
				return nil, bad("more than %d source lines: %w", maxCachegrindLines, errCachegrindCap)
			}
			cf.Lines[k] += c
			if _, ok := cf.Funcs[fn]; !ok && len(cf.Funcs) >= maxCachegrindFuncs {
				return nil, bad("more than %d functions: %w", maxCachegrindFuncs, errCachegrindCap)
			}
			cf.Funcs[fn] += c
		case inclusive:
			return nil, bad("a call without its cost line")
		case strings.HasPrefix(l, "fl="):
			file, defined, fn = l[3:], l[3:], ""
		case strings.HasPrefix(l, "fn="):
			if defined == "" {
				return nil, bad("a function before any file")
			}
			file, fn = defined, l[3:]
		case strings.HasPrefix(l, "fi="), strings.HasPrefix(l, "fe="):
			if fn == "" {
				return nil, bad("inlined code outside a function")
			}
			file = l[3:]
		case strings.HasPrefix(l, "calls="):
			if fn == "" {
				return nil, bad("a call outside a function")
			}
			inclusive = true
		case strings.HasPrefix(l, "positions:"):
			if p := strings.Fields(l[len("positions:"):]); len(p) != 1 || p[0] != "line" {
				return nil, bad("positions %q, not source lines alone", strings.TrimSpace(l[len("positions:"):]))
			}
		case strings.HasPrefix(l, "events:"):
			if ir >= 0 {
				return nil, bad("a second \"events:\" line")
			}
			ir = slices.Index(strings.Fields(l[len("events:"):]), "Ir")
			if ir < 0 {
				return nil, bad("events %q do not count instructions (Ir)", strings.TrimSpace(l[len("events:"):]))
			}
		case strings.HasPrefix(l, "summary:"):
			f := strings.Fields(l[len("summary:"):])
			if ir < 0 || ir >= len(f) {
				return nil, bad("a summary without instructions")
			}
			t, err := strconv.ParseInt(f[ir], 10, 64)
			if err != nil || t < 0 {
				return nil, bad("summary %q is not a count", f[ir])
			}
			cf.Total = t
		case strings.HasPrefix(l, "desc:"), strings.HasPrefix(l, "cmd:"), strings.HasPrefix(l, "version:"),
			strings.HasPrefix(l, "creator:"), strings.HasPrefix(l, "pid:"), l[0] == '#',
			// callgrind's: the thread and part of the run, the
			// totals (the summary again), object files, and the
			// callee of the next "calls=" line.
			strings.HasPrefix(l, "thread:"), strings.HasPrefix(l, "part:"), strings.HasPrefix(l, "totals:"),
			strings.HasPrefix(l, "ob="), strings.HasPrefix(l, "cob="), strings.HasPrefix(l, "cfl="),
			strings.HasPrefix(l, "cfi="), strings.HasPrefix(l, "cfn="):
		default:
			return nil, bad("not cachegrind output: %q", firstBytes(l, 60))
		}
	}
	if inclusive {
		return nil, bad("a call without its cost line")
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("cachegrind output, line %d: longer than %d bytes: %w", n+1, maxCachegrindLine, errCachegrindCap)
		}
		return nil, fmt.Errorf("read cachegrind output: %w", err)
	}
	if lr.N <= 0 {
		return nil, fmt.Errorf("cachegrind output: larger than %d MiB: %w", maxCachegrindBytes>>20, errCachegrindCap)
	}
	if cf.Total < 0 {
		return nil, errors.New("cachegrind output has no summary line")
	}
	if sum != cf.Total {
		return nil, fmt.Errorf("cachegrind output: its lines count %d instructions, its summary %d", sum, cf.Total)
	}
	return cf, nil
}

// firstBytes is s cut to at most n bytes.
func firstBytes(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// readCachegrind reads and parses a cachegrind output file.
func readCachegrind(path string) (*CachegrindFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read cachegrind output: %w", err)
	}
	defer f.Close()
	cf, err := ParseCachegrind(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return cf, nil
}

// maxThreadFiles bounds the per-thread files of one callgrind run read: a
// counted Go test runs with one processor and a handful of threads.
const maxThreadFiles = 256

// monitorFunc is the Go runtime's system monitor, which runs on a thread of
// its own and nothing else does.
const monitorFunc = "runtime.sysmon"

// readCallgrindThreads reads the per-thread output files of a callgrind run
// made with --separate-threads=yes and --callgrind-out-file=out (out-01,
// out-02, ...) and adds up the threads other than the runtime's system
// monitor, whose instructions it returns apart. The monitor wakes on a
// wall-clock schedule (every 20µs to 10ms) to look for stuck system calls
// and long-running goroutines, so what it executes grows with how long the
// run takes, which is the machine's load, not the benchmark's work.
func readCallgrindThreads(out string) (counted *CachegrindFile, monitor int64, err error) {
	paths, err := filepath.Glob(out + "-*")
	if err != nil {
		return nil, 0, fmt.Errorf("read callgrind output: %w", err)
	}
	if len(paths) == 0 {
		return nil, 0, fmt.Errorf("callgrind wrote no output for any thread (%s-*)", filepath.Base(out))
	}
	if len(paths) > maxThreadFiles {
		return nil, 0, fmt.Errorf("callgrind wrote %d thread files, more than %d: %w", len(paths), maxThreadFiles, errCachegrindCap)
	}
	counted = &CachegrindFile{Funcs: make(map[string]int64), Lines: make(map[SourceLine]int64)}
	var size int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			size += st.Size()
		}
		if size > maxCachegrindBytes {
			return nil, 0, fmt.Errorf("callgrind output: its thread files are larger than %d MiB together: %w", maxCachegrindBytes>>20, errCachegrindCap)
		}
		cf, err := readCachegrind(p)
		if err != nil {
			return nil, 0, err
		}
		if cf.Funcs[monitorFunc] > 0 {
			monitor += cf.Total
			continue
		}
		if err := counted.add(cf); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", filepath.Base(p), err)
		}
	}
	return counted, monitor, nil
}

// add adds o's counts to f's, within the caps of one file.
func (f *CachegrindFile) add(o *CachegrindFile) error {
	if o.Total > (1<<62)-f.Total {
		return errors.New("counts beyond 2^62 instructions")
	}
	f.Total += o.Total
	for fn, c := range o.Funcs {
		if _, ok := f.Funcs[fn]; !ok && len(f.Funcs) >= maxCachegrindFuncs {
			return fmt.Errorf("more than %d functions: %w", maxCachegrindFuncs, errCachegrindCap)
		}
		f.Funcs[fn] += c
	}
	for l, c := range o.Lines {
		if _, ok := f.Lines[l]; !ok && len(f.Lines) >= maxCachegrindLines {
			return fmt.Errorf("more than %d source lines: %w", maxCachegrindLines, errCachegrindCap)
		}
		f.Lines[l] += c
	}
	return nil
}

// An OpProfile is what one operation of a benchmark executes, by function
// and by source line: the difference of a count's two runs divided by its
// N, as the count's PerOp is the difference of their totals. Functions and
// lines the operations do not run (their counts are the same in both
// runs) are left out; what is kept adds up to PerOp.
type OpProfile struct {
	Funcs map[string]float64
	Lines map[SourceLine]float64
	// Source is the text of lines, trimmed, where their file could be
	// read when the count was made. A line's File is relative to its
	// module's root (slash-separated) when it lies in the counted
	// module, so that the base's and the head's trees name it alike;
	// otherwise as the binary's debug information names it.
	Source map[SourceLine]string
}

// Caps of the source read for an OpProfile.
const (
	// maxSourceFiles bounds the files read for one count.
	maxSourceFiles = 200
	// maxSourceBytes bounds one file read, in bytes.
	maxSourceBytes = 4 << 20
	// maxSourceText bounds a line's kept text, in bytes.
	maxSourceText = 200
)

// opProfile is the per-operation profile of n operations, the difference
// of the runs short and long. Files under root (the counted module's
// directory) are named relative to it; the text of each kept line is read
// from its file where it can be.
func opProfile(short, long *CachegrindFile, n int, root string) *OpProfile {
	p := &OpProfile{Funcs: make(map[string]float64), Lines: make(map[SourceLine]float64), Source: make(map[SourceLine]string)}
	per := float64(n)
	for fn, c := range long.Funcs {
		if d := c - short.Funcs[fn]; d != 0 {
			p.Funcs[fn] = float64(d) / per
		}
	}
	for fn, c := range short.Funcs {
		if _, ok := long.Funcs[fn]; !ok && c != 0 {
			p.Funcs[fn] = -float64(c) / per
		}
	}
	diff := make(map[SourceLine]float64)
	for l, c := range long.Lines {
		if d := c - short.Lines[l]; d != 0 {
			diff[l] = float64(d) / per
		}
	}
	for l, c := range short.Lines {
		if _, ok := long.Lines[l]; !ok && c != 0 {
			diff[l] = -float64(c) / per
		}
	}
	files := make(map[string][]string) // nil: not at hand
	for l, v := range diff {
		text, read := files[l.File]
		if !read && len(files) < maxSourceFiles {
			text = readSourceLines(l.File)
			files[l.File] = text
		}
		k := l
		k.File = ModuleRelative(l.File, root)
		p.Lines[k] += v
		if l.Line >= 1 && l.Line <= len(text) {
			if s := strings.TrimSpace(text[l.Line-1]); s != "" {
				p.Source[k] = firstBytes(s, maxSourceText)
			}
		}
	}
	return p
}

// readSourceLines returns the lines of a source file, or nil when it
// cannot be read or is larger than maxSourceBytes.
func readSourceLines(path string) []string {
	if !filepath.IsAbs(path) {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > maxSourceBytes {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSourceBytes))
	if err != nil {
		return nil
	}
	return strings.Split(string(data), "\n")
}

// ModuleRelative is file relative to root, slash-separated, when it lies
// under root (the module's own files, which the base's worktree and the
// head name from different directories); otherwise file as it is.
func ModuleRelative(file, root string) string {
	if root == "" || !filepath.IsAbs(file) {
		return file
	}
	rel, err := filepath.Rel(root, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return file
	}
	return filepath.ToSlash(rel)
}

// moduleRoot is the directory of the go.mod that dir belongs to, or dir
// when none is found.
func moduleRoot(dir string) string {
	for d := dir; ; {
		if st, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && st.Mode().IsRegular() {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return dir
		}
		d = up
	}
}
