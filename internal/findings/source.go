package findings

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/profiles"
)

// maxSourceSize bounds what is read of one source file.
const maxSourceSize = 8 << 20

// sourceReader reads the profiled program's source files, once each.
type sourceReader struct {
	dir   string
	files map[string]*sourceFile // by build path
}

type sourceFile struct {
	path   string // local path; "" when not found
	lines  []string
	fset   *token.FileSet
	ast    *ast.File
	err    error
	parsed bool
}

func newSourceReader(dir string) *sourceReader {
	return &sourceReader{dir: dir, files: map[string]*sourceFile{}}
}

func (s *sourceReader) file(buildPath string) *sourceFile {
	if f, ok := s.files[buildPath]; ok {
		return f
	}
	f := &sourceFile{}
	s.files[buildPath] = f
	path, ok := profiles.LocateSource(buildPath, profiles.SourceOptions{SourceDir: s.dir})
	if !ok {
		return f
	}
	f.path = path
	f.lines, f.err = readLines(path)
	return f
}

// parse parses the file on first use.
func (f *sourceFile) parse() error {
	if f.parsed || f.err != nil {
		return f.err
	}
	f.parsed = true
	f.fset = token.NewFileSet()
	f.ast, f.err = parser.ParseFile(f.fset, f.path, strings.Join(f.lines, "\n"), parser.SkipObjectResolution)
	if f.err != nil {
		f.err = fmt.Errorf("parse %s: %w", f.path, f.err)
	}
	return f.err
}

// check says whether the file defines function (starting at start, when
// known) around line: whether it is the source the profile was taken of.
func (f *sourceFile) check(function string, start, line int64) error {
	if err := f.parse(); err != nil {
		return err
	}
	from, to, err := profiles.FunctionSpan(f.fset, f.ast, function, start)
	if err != nil {
		return err
	}
	if line != 0 && (line < from || line > to) {
		return fmt.Errorf("line %d is outside %s (lines %d-%d)", line, function, from, to)
	}
	return nil
}

// profilesFunctionSpan is the span of function in a parsed source file.
func profilesFunctionSpan(f *sourceFile, function string, start int64) (int64, int64, error) {
	if err := f.parse(); err != nil {
		return 0, 0, err
	}
	return profiles.FunctionSpan(f.fset, f.ast, function, start)
}

func (f *sourceFile) text(line int64) string {
	if line < 1 || line > int64(len(f.lines)) {
		return ""
	}
	return strings.TrimSpace(f.lines[line-1])
}

func readLines(path string) ([]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read source: %w", err)
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.Size() > maxSourceSize {
		return nil, fmt.Errorf("read source %s: larger than %d bytes", path, maxSourceSize)
	}
	var lines []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 0, 64<<10), maxSourceSize)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read source %s: %w", path, err)
	}
	return lines, nil
}

// checkSource adds each evidence line's source text, after checking that
// the source found is the program that was profiled: a function that is
// not where the profile says means another program or another version,
// whose lines and compiler reasons would mislead. Such evidence keeps the
// profile's numbers only, the finding says why, and a warning names the
// file once.
func (e *env) checkSource(fs []Finding) []error {
	var warns []error
	warned := map[string]bool{}
	for i := range fs {
		f := &fs[i]
		noted := map[string]bool{}
		note := func(n string) {
			if !noted[n] {
				noted[n] = true
				f.Notes = append(f.Notes, n)
			}
		}
		for j := range f.Evidence {
			ev := &f.Evidence[j]
			if ev.File == "" || ev.Function == "" {
				continue
			}
			sf := e.src.file(ev.File)
			if sf.path == "" {
				continue
			}
			if sf.err != nil {
				if !warned[sf.path] {
					warned[sf.path] = true
					warns = append(warns, fmt.Errorf("source %s: %w", sf.path, sf.err))
				}
				continue
			}
			// Without the function's first line (goroutine stacks), a
			// function literal cannot be told from another: no check.
			if ev.start == 0 {
				ev.Source = sf.text(ev.Line)
				continue
			}
			if err := sf.check(ev.Function, ev.start, ev.Line); err != nil {
				ev.Source, ev.Compiler = "", nil
				note(fmt.Sprintf("The source at %s does not match the profiled program (%v): it may be another program or version, so source lines and compiler reasons are left out.", sf.path, err))
				if !warned[sf.path] {
					warned[sf.path] = true
					warns = append(warns, fmt.Errorf("source %s does not match the profiled program: %w; pass the checkout it was built from with --source-dir", sf.path, err))
				}
				continue
			}
			if ev.Line != 0 {
				ev.Source = sf.text(ev.Line)
			}
		}
		if e.ix != nil && e.ruleUsesCompiler(f.Rule) {
			for _, ev := range f.Evidence {
				if ev.File == "" {
					continue
				}
				if _, ok := e.ix.Resolve(ev.File); !ok {
					note(fmt.Sprintf("The compiler diagnostics do not cover %s: build them from the profiled program's source (--source-dir).", ev.File))
				}
			}
		}
	}
	return warns
}

func (e *env) ruleUsesCompiler(id string) bool {
	r, ok := Lookup(id)
	return ok && r.compiler
}

// reasons returns the compiler's plain-language reasons for allocations
// at a line that keep accepts (all escape diagnostics when keep is nil).
func (e *env) reasons(file string, line int64, keep func(d escape.Diagnostic) bool) []string {
	if e.ix == nil || file == "" || line <= 0 {
		return nil
	}
	var out []string
	for _, d := range e.ix.At(file, int(line)) {
		if d.Kind.Group() != escape.GroupEscape || d.Kind == escape.KindLeak {
			continue
		}
		if keep != nil && !keep(d) {
			continue
		}
		if r := d.Reason; r != "" && !contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
