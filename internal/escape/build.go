package escape

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Options configures Build.
type Options struct {
	// Go is the go command to run; "go" (from PATH) when empty.
	Go string
	// Env holds extra environment variables for the go command, such as
	// GOOS or GOFLAGS, added to the current environment.
	Env []string
	// BuildFlags are extra build flags, such as "-tags=prod"; they must
	// match the binary that was profiled for lines to mean the same code.
	BuildFlags []string
	// External keeps diagnostics about files outside the built packages'
	// modules. The compiler attributes generic code instantiated in a
	// package (sync/atomic's types, say) to that package, which is rarely
	// what a user asks about, so such files are dropped by default.
	External bool
}

func (o Options) goCmd() string {
	if o.Go != "" {
		return o.Go
	}
	return "go"
}

// A listedPackage is what Build needs to know about a package before
// building it.
type listedPackage struct {
	ImportPath string
	Name       string
	Dir        string
	Module     *struct {
		Path string
		Dir  string
	}
	Error *struct{ Err string }
}

// Build compiles pkgs (package patterns, "." when empty) of the module at
// dir with the compiler's optimization log enabled and indexes what the
// compiler reports for them and for every package of their modules they
// import. Nothing is written to dir; the build's output is discarded.
//
// The compiler logs only packages it actually compiles, and a cached build
// compiles nothing. The log directory is part of the compiler flags, which
// the go command hashes into its cache keys, so a fresh temporary directory
// per call misses the cache for exactly the flagged packages — the user's
// — while the standard library and other dependencies stay cached. That
// keeps a small service to about a second, where -a or an empty GOCACHE
// would recompile the standard library (10 s and more on two cores).
//
// Problems do not abort: a package that fails to load or compile becomes
// one warning line ("compiler diagnostics unavailable: build of ./x failed:
// ...") and the index holds whatever the compiler did report.
func Build(ctx context.Context, dir string, pkgs []string, opts Options) (*Index, []error) {
	diags, warns := build(ctx, dir, pkgs, opts)
	return NewIndex(diags), warns
}

func build(ctx context.Context, dir string, pkgs []string, opts Options) ([]Diagnostic, []error) {
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	listed, err := listPackages(ctx, dir, pkgs, opts)
	if err != nil {
		return nil, []error{unavailable(strings.Join(pkgs, " "), err)}
	}
	var warns []error
	var good []listedPackage
	for _, p := range listed {
		if p.Error != nil {
			warns = append(warns, unavailable(displayPath(dir, p), errors.New(firstLine(p.Error.Err))))
			continue
		}
		good = append(good, p)
	}
	if len(good) == 0 {
		return nil, warns
	}

	logDir, err := os.MkdirTemp("", "perfscope-escape-")
	if err != nil {
		return nil, append(warns, unavailable(strings.Join(pkgs, " "), err))
	}
	defer os.RemoveAll(logDir)

	args, err := buildArgs(good, logDir, opts)
	if err != nil {
		return nil, append(warns, unavailable(strings.Join(pkgs, " "), err))
	}
	var stderr bytes.Buffer
	cmd := goCommand(ctx, dir, opts, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, append(warns, unavailable(strings.Join(pkgs, " "), ctx.Err()))
		}
		// Packages that did compile have written their logs: keep them.
		warns = append(warns, buildFailures(dir, good, stderr.String(), err)...)
	}

	raw, errs := readDir(logDir)
	warns = append(warns, errs...)
	return finish(localize(raw, good, opts), newSourceLines()), warns
}

// listPackages asks the go command which packages pkgs names, in which
// modules, without building anything.
func listPackages(ctx context.Context, dir string, pkgs []string, opts Options) ([]listedPackage, error) {
	args := append([]string{"list", "-e", "-json=ImportPath,Name,Dir,Module,Error"}, opts.BuildFlags...)
	args = append(args, "--")
	args = append(args, pkgs...)
	var stdout, stderr bytes.Buffer
	cmd := goCommand(ctx, dir, opts, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := firstLine(stderr.String()); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, fmt.Errorf("go list: %w", err)
	}
	var out []listedPackage
	dec := json.NewDecoder(&stdout)
	for {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("read go list output: %w", err)
		}
		out = append(out, p)
	}
}

// buildArgs returns the go list -export command line that compiles pkgs
// with optimization logs under logDir. Every command compiles as package
// "main" and the compiler names log directories by package, so commands
// would overwrite each other's logs: each gets its own directory, by a
// later, more specific -gcflags pattern (the last matching one wins).
func buildArgs(pkgs []listedPackage, logDir string, opts Options) ([]string, error) {
	// -export compiles every package, as a build does, but links nothing:
	// linking would cost time and yield no diagnostics.
	args := []string{"list", "-export", "-f", "{{.ImportPath}}"}
	flag := func(pattern, sub string) error {
		v, err := quoteFlag("-json=0," + filepath.Join(logDir, sub))
		if err != nil {
			return err
		}
		args = append(args, "-gcflags="+pattern+"="+v)
		return nil
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		pattern := p.ImportPath
		if p.Module != nil && p.Module.Path != "" {
			// Every package of the module: a hot line is as likely in
			// the service's internal packages as in its main package.
			pattern = p.Module.Path + "/..."
		}
		if !seen[pattern] {
			seen[pattern] = true
			if err := flag(pattern, "lib"); err != nil {
				return nil, err
			}
		}
	}
	for i, p := range pkgs {
		if p.Name == "main" {
			if err := flag(p.ImportPath, fmt.Sprintf("main%d", i)); err != nil {
				return nil, err
			}
		}
	}
	args = append(args, opts.BuildFlags...)
	args = append(args, "--")
	for _, p := range pkgs {
		args = append(args, p.ImportPath)
	}
	return args, nil
}

// quoteFlag quotes a compiler flag for the go command's -gcflags parser,
// which splits on spaces, in case the temporary directory has one.
func quoteFlag(f string) (string, error) {
	if !strings.ContainsAny(f, " \t\n'\"") {
		return f, nil
	}
	if !strings.Contains(f, "'") {
		return "'" + f + "'", nil
	}
	if !strings.Contains(f, `"`) {
		return `"` + f + `"`, nil
	}
	return "", fmt.Errorf("temporary directory %q cannot be passed to the compiler", f)
}

func goCommand(ctx context.Context, dir string, opts Options, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, opts.goCmd(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), opts.Env...)
	// An interrupt lets the go command stop the compilers it started; a
	// kill would leave them running.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// buildFailures turns the go command's error output into one warning per
// failed package, each with the first error line: the rest usually
// follows from it, and a report needs one line, not a compiler transcript.
func buildFailures(dir string, pkgs []listedPackage, stderr string, runErr error) []error {
	byPath := map[string]listedPackage{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	var warns []error
	current := ""
	reported := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if pkg, ok := strings.CutPrefix(line, "# "); ok {
			current = pkg
			continue
		}
		if reported[current] {
			continue
		}
		reported[current] = true
		name := current
		if p, ok := byPath[current]; ok {
			name = displayPath(dir, p)
		} else if name == "" {
			name = displayPaths(dir, pkgs)
		}
		warns = append(warns, unavailable(name, errors.New(line)))
	}
	if len(warns) == 0 {
		warns = append(warns, unavailable(displayPaths(dir, pkgs), runErr))
	}
	return warns
}

// unavailable is the one-line warning for a package without diagnostics.
func unavailable(what string, err error) error {
	return fmt.Errorf("compiler diagnostics unavailable: build of %s failed: %w", what, err)
}

// displayPath names a package as the user would type it: "./x" inside dir.
func displayPath(dir string, p listedPackage) string {
	if p.Dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			if rel, err := filepath.Rel(abs, p.Dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				if rel == "." {
					return "."
				}
				return "./" + filepath.ToSlash(rel)
			}
		}
	}
	return p.ImportPath
}

func displayPaths(dir string, pkgs []listedPackage) string {
	names := make([]string, len(pkgs))
	for i, p := range pkgs {
		names[i] = displayPath(dir, p)
	}
	return strings.Join(names, " ")
}

func firstLine(s string) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "# ") {
			return line
		}
	}
	return ""
}

// localize maps the compiler's file names to local absolute paths (under
// -trimpath they are module-relative, "example.com/m/x.go") and, unless
// opts.External, keeps only diagnostics about files of the built modules.
func localize(diags []Diagnostic, pkgs []listedPackage, opts Options) []Diagnostic {
	type root struct{ path, dir string }
	var roots []root
	for _, p := range pkgs {
		if p.Module != nil && p.Module.Dir != "" {
			roots = append(roots, root{p.Module.Path, p.Module.Dir})
		} else if p.Dir != "" {
			roots = append(roots, root{p.ImportPath, p.Dir})
		}
	}
	fix := func(f string) string {
		if filepath.IsAbs(f) {
			return filepath.Clean(f)
		}
		for _, r := range roots {
			if rest, ok := strings.CutPrefix(f, r.path+"/"); ok {
				return filepath.Join(r.dir, filepath.FromSlash(rest))
			}
		}
		return f
	}
	inRoots := func(f string) bool {
		for _, r := range roots {
			if f == r.dir || strings.HasPrefix(f, r.dir+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	out := diags[:0]
	for _, d := range diags {
		d.Pos.File = fix(d.Pos.File)
		if !opts.External && !inRoots(d.Pos.File) {
			continue
		}
		for i := range d.Inlined {
			d.Inlined[i].File = fix(d.Inlined[i].File)
		}
		for i := range d.Flow {
			st := &d.Flow[i]
			st.Pos.File = fix(st.Pos.File)
			for j := range st.Via {
				st.Via[j].Pos.File = fix(st.Via[j].Pos.File)
				for k := range st.Via[j].Inlined {
					st.Via[j].Inlined[k].File = fix(st.Via[j].Inlined[k].File)
				}
			}
		}
		out = append(out, d)
	}
	return out
}

// DiscoverPackages returns the packages to build for the module containing
// dir: its commands (main packages), whose builds cover every package of the
// module they import. A module without a command is an error, because the
// profiled program is a command and guessing among libraries would be wrong.
// It also returns the module's root directory, where Build should run.
func DiscoverPackages(ctx context.Context, dir string, opts Options) (root string, pkgs []string, err error) {
	var stdout, stderr bytes.Buffer
	cmd := goCommand(ctx, dir, opts, "env", "GOMOD")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := firstLine(stderr.String()); msg != "" {
			return "", nil, fmt.Errorf("find the module at %s: %s", dir, msg)
		}
		return "", nil, fmt.Errorf("find the module at %s: %w", dir, err)
	}
	gomod := strings.TrimSpace(stdout.String())
	if gomod == "" || gomod == os.DevNull {
		return "", nil, fmt.Errorf("%s is not inside a Go module: name the packages to build, or use a module directory", dir)
	}
	root = filepath.Dir(gomod)
	listed, err := listPackages(ctx, root, []string{"./..."}, opts)
	if err != nil {
		return "", nil, fmt.Errorf("find packages in %s: %w", root, err)
	}
	for _, p := range listed {
		if p.Name == "main" && p.Error == nil {
			pkgs = append(pkgs, p.ImportPath)
		}
	}
	if len(pkgs) == 0 {
		return "", nil, fmt.Errorf("no main package in the module at %s: name the packages to build", root)
	}
	return root, pkgs, nil
}
