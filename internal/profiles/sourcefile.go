package profiles

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// maxSourceFileSize bounds what is read of one source file: a generated
// file that large costs more to parse than its listing is worth.
const maxSourceFileSize = 8 << 20

// SourceFiles reads the profiled program's source files, each once: a file
// a profile names is found with LocateSource, read whole, and parsed on
// first use. It is not safe for concurrent use.
type SourceFiles struct {
	opts  SourceOptions
	files map[string]*SourceFile // by build path
}

// NewSourceFiles returns a SourceFiles that finds files as opts.SourceDir
// and opts.Resolve say; the other options are not used.
func NewSourceFiles(opts SourceOptions) *SourceFiles {
	return &SourceFiles{opts: opts, files: map[string]*SourceFile{}}
}

// File returns the source file of a file path recorded in a profile. Its
// Path is "" when no local file was found; its Err says when one was found
// but could not be read.
func (s *SourceFiles) File(buildPath string) *SourceFile {
	if f, ok := s.files[buildPath]; ok {
		return f
	}
	f := &SourceFile{}
	s.files[buildPath] = f
	path, ok := LocateSource(buildPath, s.opts)
	if !ok {
		return f
	}
	f.Path = path
	f.Lines, f.Err = readSourceLines(path)
	return f
}

// Line is line n (1 is the first) of the source file of a file path
// recorded in a profile or a compiler diagnostic, as File finds it; ""
// when there is no such file or line. It is the one reader of source
// lines: listings, findings and compiler reasons all show text through
// it.
func (s *SourceFiles) Line(buildPath string, n int64) string {
	return s.File(buildPath).Line(n)
}

// A SourceFile is one source file of the profiled program.
type SourceFile struct {
	// Path is the local file; "" when none was found.
	Path string
	// Lines is the file's text, line 1 first.
	Lines []string
	// Err says why the file could not be read or, once Parse has run,
	// parsed.
	Err error
	// Fset and AST are the parsed file, set by Parse.
	Fset *token.FileSet
	AST  *ast.File

	parsed bool
}

// Line is line n of the file (1 is the first), "" when it has no such
// line.
func (f *SourceFile) Line(n int64) string {
	if n < 1 || n > int64(len(f.Lines)) {
		return ""
	}
	return f.Lines[n-1]
}

// Parse parses the file on first use and returns Err.
func (f *SourceFile) Parse() error {
	if f.parsed || f.Err != nil {
		return f.Err
	}
	f.parsed = true
	f.Fset = token.NewFileSet()
	f.AST, f.Err = parser.ParseFile(f.Fset, f.Path, strings.Join(f.Lines, "\n"), parser.SkipObjectResolution)
	if f.Err != nil {
		f.Err = fmt.Errorf("parse %s: %w", f.Path, f.Err)
	}
	return f.Err
}

// FunctionSpan parses the file and returns the lines of the function a
// profile names in it; see FunctionSpan.
func (f *SourceFile) FunctionSpan(function string, startLine int64) (start, end int64, err error) {
	if err := f.Parse(); err != nil {
		return 0, 0, err
	}
	return FunctionSpan(f.Fset, f.AST, function, startLine)
}

// LocateSource finds the local file for a file path recorded in a
// profile: opts.Resolve when set; else the path itself when it exists;
// else, with opts.SourceDir, MapPath under it, and failing that the path
// itself.
func LocateSource(buildPath string, opts SourceOptions) (string, bool) {
	if buildPath == "" || strings.HasPrefix(buildPath, "<") {
		return "", false
	}
	if opts.Resolve != nil {
		return opts.Resolve(buildPath)
	}
	if opts.Confined {
		return ConfinedPath(opts.SourceDir, buildPath)
	}
	if opts.SourceDir == "" {
		if isRegular(buildPath) {
			return buildPath, true
		}
		return "", false
	}
	if p, ok := MapPath(opts.SourceDir, buildPath); ok {
		return p, true
	}
	// A checkout given explicitly wins, but a file still at its build
	// path (a local build) is better than nothing.
	if isRegular(buildPath) {
		return buildPath, true
	}
	return "", false
}

// MapPath finds the file in the checkout at sourceDir that a build path
// (as a profile records it, from the machine that built the binary, or
// module-relative under -trimpath) refers to. It tries the build path's
// trailing elements under sourceDir, longest first, so
// "/build/ci/svc/internal/h/h.go" finds "<sourceDir>/internal/h/h.go".
// It returns false when no suffix exists there as a regular file. A suffix
// never climbs out of sourceDir: only the elements after a build path's
// last ".." are tried.
func MapPath(sourceDir, buildPath string) (string, bool) {
	elems := strings.FieldsFunc(buildPath, func(r rune) bool { return r == '/' || r == '\\' })
	for i := len(elems) - 1; i >= 0; i-- {
		if elems[i] == ".." {
			elems = elems[i+1:]
			break
		}
	}
	for i := range elems {
		p := filepath.Join(sourceDir, filepath.Join(elems[i:]...))
		if isRegular(p) {
			return p, true
		}
	}
	return "", false
}

// ConfinedPath finds the file a build path refers to inside root only, as
// MapPath does, and refuses a match that a symbolic link leads out of
// root. It returns false without root.
func ConfinedPath(root, buildPath string) (string, bool) {
	if root == "" {
		return "", false
	}
	p, ok := MapPath(root, buildPath)
	if !ok {
		return "", false
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return real, true
}

func isRegular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func readSourceLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read source: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxSourceFileSize {
		return nil, fmt.Errorf("read source %s: larger than %d bytes", path, maxSourceFileSize)
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxSourceFileSize)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read source %s: %w", path, err)
	}
	return lines, nil
}

// FunctionSpan finds the lines of the function a profile names in a
// parsed file: the declaration or function literal starting at startLine
// (the profile's Function.StartLine), checked against the name, or when
// startLine is 0 the declaration with that name. It fails when the file
// holds no such function, which means the file is not the source the
// profiled binary was built from.
func FunctionSpan(fset *token.FileSet, file *ast.File, function string, startLine int64) (start, end int64, err error) {
	name, closure := funcName(function)
	var found ast.Node
	ast.Inspect(file, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		switch d := n.(type) {
		case *ast.FuncDecl:
			line := int64(fset.Position(d.Pos()).Line)
			if !closure && d.Name.Name == name && (startLine == 0 || line == startLine) {
				found = d
				return false
			}
		case *ast.FuncLit:
			if closure && startLine != 0 && int64(fset.Position(d.Pos()).Line) == startLine {
				found = d
				return false
			}
		}
		return true
	})
	if found == nil {
		if startLine == 0 {
			return 0, 0, fmt.Errorf("no function %s", function)
		}
		return 0, 0, fmt.Errorf("no function %s at line %d", function, startLine)
	}
	return int64(fset.Position(found.Pos()).Line), int64(fset.Position(found.End()).Line), nil
}

// funcName returns the declared name of a Go symbol ("handle" for
// "main.(*server).handle", "F" for "example.com/m.F[...]") and whether the
// symbol is a function literal inside it ("main.F.func1", "main.F.gowrap2").
func funcName(symbol string) (name string, closure bool) {
	if i := strings.IndexByte(symbol, '['); i >= 0 {
		symbol = symbol[:i] + symbol[strings.LastIndexByte(symbol, ']')+1:]
	}
	if i := strings.LastIndexByte(symbol, '/'); i >= 0 {
		symbol = symbol[i+1:]
	}
	parts := strings.Split(symbol, ".")
	for len(parts) > 2 {
		last := parts[len(parts)-1]
		if parts[len(parts)-2] == "init" && strings.Trim(last, "0123456789") == "" && !closure {
			// "main.init.0" is the first func init of the package.
			return "init", false
		}
		if !isClosureSuffix(last) {
			break
		}
		closure = true
		parts = parts[:len(parts)-1]
	}
	return parts[len(parts)-1], closure
}

// isClosureSuffix recognises the compiler's names for function literals
// and their wrappers: "func1", "gowrap2", "deferwrap1", and the bare
// numbers of nested literals ("func1.2").
func isClosureSuffix(s string) bool {
	for _, p := range []string{"func", "gowrap", "deferwrap"} {
		if rest, ok := strings.CutPrefix(s, p); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return s != "" && strings.Trim(s, "0123456789") == ""
}
