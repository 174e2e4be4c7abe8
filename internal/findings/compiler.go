package findings

import (
	"context"
	"errors"
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/profiles"
)

// CompilerIndex builds the compiler's diagnostics for the program a
// profiled, from the Go module at sourceDir ("" means the current
// directory). Only the commands whose files the profiles name, and the
// module's packages whose functions they name, are built: a
// module with many commands costs one build, not all of them. When the
// source is missing or does not hold the profiled program it returns nil
// and a warning saying so; Diagnose then works from the profiles alone.
//
// Unchanged source is not built again: escape.Build keeps what the
// compiler said in perfscope's cache (escape.DefaultCacheDir), so a
// second report of a run, from the CLI or the dashboard, costs two
// questions to the go command (where the module is and with which
// settings, which files its packages have) and no compile.
func CompilerIndex(ctx context.Context, a *profiles.Analysis, sourceDir string) (*escape.Index, []error) {
	dir := sourceDir
	if dir == "" {
		dir = "."
	}
	mod, err := escape.FindModule(ctx, dir, escape.Options{})
	if err != nil {
		return nil, []error{fmt.Errorf("compiler reasons unavailable: %w (pass --source-dir with the checkout the service was built from)", err)}
	}
	root := mod.Root
	modPath, err := modulePath(root)
	if err != nil {
		return nil, []error{fmt.Errorf("compiler reasons unavailable: %w", err)}
	}
	var pkgs []string
	for _, pf := range profiledFiles(a, modPath) {
		local, ok := profiles.MapPath(root, pf.file)
		if !ok {
			continue
		}
		rel, err := filepath.Rel(root, filepath.Dir(local))
		if err != nil {
			continue
		}
		pkg := modPath
		if rel != "." {
			pkg += "/" + filepath.ToSlash(rel)
		}
		// A main function's file names a command of the module only when
		// the module has a command there; a function named by the
		// module's path is in that package whatever it is.
		if (pf.inModule || isCommand(filepath.Dir(local))) && !slices.Contains(pkgs, pkg) {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(pkgs) == 0 {
		return nil, []error{errors.New("compiler reasons unavailable: no command of the module at " + root +
			" matches the profiled program's main package (pass --source-dir with the checkout the service was built from)")}
	}
	return mod.Build(ctx, pkgs)
}

// isCommand reports whether dir holds a main package. It reads the files'
// package clauses and build constraints itself: asking the go command
// about every package of the module cost more than a cached build.
func isCommand(dir string) bool {
	p, err := build.ImportDir(dir, 0)
	return err == nil && p.Name == "main"
}

// A profiledFile is a source file of a function in the profiles, as the
// profiles record it.
type profiledFile struct {
	file     string
	inModule bool // the function is named by the module's path, not main
}

// profiledFiles are the source files of the functions in a's profiles that
// belong to package main or to a package of the module modPath: a program
// that runs a library package of the module (as perfscope runs its bundled
// examples) names its functions by that package's path.
func profiledFiles(a *profiles.Analysis, modPath string) []profiledFile {
	var files []profiledFile
	seen := map[string]bool{}
	for _, p := range a.Profiles {
		for _, fn := range p.Function {
			inModule := strings.HasPrefix(fn.Name, modPath+"/")
			if (!inModule && !strings.HasPrefix(fn.Name, "main.")) || fn.Filename == "" || seen[fn.Filename] {
				continue
			}
			seen[fn.Filename] = true
			files = append(files, profiledFile{fn.Filename, inModule})
		}
	}
	slices.SortFunc(files, func(x, y profiledFile) int { return strings.Compare(x.file, y.file) })
	return files
}

// modulePath reads the module path from the go.mod in root.
func modulePath(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`), nil
		}
	}
	return "", fmt.Errorf("%s/go.mod has no module line", root)
}
