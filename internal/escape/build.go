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
	"slices"
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
	// CacheDir keeps the diagnostics of earlier builds, one file per
	// build key, so that building unchanged source again costs no
	// compile; DefaultCacheDir when empty, and "off" keeps nothing.
	CacheDir string

	// compiling, when set, is called before the compiler runs (tests
	// count builds with it).
	compiling func()
}

// getenv returns the environment variable the go command sees: from Env,
// else from this process's environment.
func (o Options) getenv(name string) string {
	for _, kv := range slices.Backward(o.Env) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return os.Getenv(name)
}

func (o Options) goCmd() string {
	if o.Go != "" {
		return o.Go
	}
	return "go"
}

// A listedPackage is what Build needs to know about a package before
// building it, as go list reports it.
type listedPackage struct {
	ImportPath string
	Name       string
	Dir        string
	Module     *listedModule
	Standard   bool
	// DepOnly marks a package listed only as a dependency of those named.
	DepOnly bool
	Error   *struct{ Err string }

	// The files the go command hands to the compiler, cgo and the
	// assembler, relative to Dir.
	GoFiles, CgoFiles, CFiles, CXXFiles, MFiles, HFiles, FFiles, SFiles []string
	SwigFiles, SwigCXXFiles, SysoFiles                                  []string
}

// A listedModule is a package's module, as go list reports it.
type listedModule struct {
	Path    string
	Version string
	Dir     string
	GoMod   string
	Main    bool
	Replace *listedModule
}

// listFields are the fields of listedPackage go list is asked for.
const listFields = "ImportPath,Name,Dir,Module,Standard,DepOnly,Error," +
	"GoFiles,CgoFiles,CFiles,CXXFiles,MFiles,HFiles,FFiles,SFiles,SwigFiles,SwigCXXFiles,SysoFiles"

// sourceFiles lists every file of p that goes into its build.
func (p listedPackage) sourceFiles() []string {
	return slices.Concat(p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.MFiles, p.HFiles, p.FFiles, p.SFiles,
		p.SwigFiles, p.SwigCXXFiles, p.SysoFiles)
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
//
// A build without warnings is kept in opts.CacheDir under a digest of all
// that decides what the compiler says (see buildKey): the same build of
// unchanged source, with the same toolchain and flags, is read back, not
// compiled again; a change to any of it builds anew.
func Build(ctx context.Context, dir string, pkgs []string, opts Options) (*Index, []error) {
	// Without the go command's settings the build goes on, uncached.
	env, _ := goEnv(ctx, dir, opts, keyEnv)
	diags, warns := build(ctx, dir, pkgs, env, opts)
	return NewIndex(diags), warns
}

// build is Build with env, the go command's settings in keyEnv, already
// read; nil when they could not be, which leaves the build uncached.
func build(ctx context.Context, dir string, pkgs []string, env map[string]string, opts Options) ([]Diagnostic, []error) {
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	listed, err := listPackages(ctx, dir, pkgs, true, opts)
	if err != nil {
		return nil, []error{unavailable(strings.Join(pkgs, " "), err)}
	}
	var warns []error
	var good []listedPackage
	for _, p := range listed {
		if p.DepOnly {
			continue
		}
		if p.Error != nil {
			warns = append(warns, unavailable(displayPath(dir, p), errors.New(firstLine(p.Error.Err))))
			continue
		}
		good = append(good, p)
	}
	if len(good) == 0 {
		return nil, warns
	}
	// Only a clean build is kept: a failure may be the machine's (a
	// module that could not be downloaded), not the source's.
	var cache *diagnosticsCache
	var key string
	if len(warns) == 0 {
		if cache = newCache(opts); cache != nil {
			if key, err = buildKey(dir, pkgs, listed, env, opts); err != nil {
				cache = nil
			} else if diags, ok := cache.get(key); ok {
				return diags, nil
			}
		}
	}
	diags, errs := compile(ctx, dir, pkgs, good, opts)
	if len(warns) == 0 && len(errs) == 0 {
		cache.put(key, diags)
	}
	return diags, append(warns, errs...)
}

// compile builds pkgs, listed as good, with the compiler's logs on and
// returns what the logs say about them.
func compile(ctx context.Context, dir string, pkgs []string, good []listedPackage, opts Options) ([]Diagnostic, []error) {
	var warns []error
	if opts.compiling != nil {
		opts.compiling()
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
// modules, and with deps every package they depend on, without building
// anything.
func listPackages(ctx context.Context, dir string, pkgs []string, deps bool, opts Options) ([]listedPackage, error) {
	args := []string{"list", "-e", "-json=" + listFields}
	if deps {
		args = append(args, "-deps")
	}
	args = append(args, opts.BuildFlags...)
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
			if within(f, r.dir) {
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
