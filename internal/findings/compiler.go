package findings

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/profiles"
)

// CompilerIndex builds the compiler's diagnostics for the program a
// profiled, from the Go module at sourceDir ("" means the current
// directory). Only the commands whose files the profiles name are built: a
// module with many commands costs one build, not all of them. When the
// source is missing or does not hold the profiled program it returns nil
// and a warning saying so; Diagnose then works from the profiles alone.
func CompilerIndex(ctx context.Context, a *profiles.Analysis, sourceDir string) (*escape.Index, []error) {
	dir := sourceDir
	if dir == "" {
		dir = "."
	}
	root, mains, err := escape.DiscoverPackages(ctx, dir, escape.Options{})
	if err != nil {
		return nil, []error{fmt.Errorf("compiler reasons unavailable: %w (pass --source-dir with the checkout the service was built from)", err)}
	}
	modPath, err := modulePath(root)
	if err != nil {
		return nil, []error{fmt.Errorf("compiler reasons unavailable: %w", err)}
	}
	var pkgs []string
	for _, file := range mainFiles(a) {
		local, ok := profiles.MapPath(root, file)
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
		if slices.Contains(mains, pkg) && !slices.Contains(pkgs, pkg) {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(pkgs) == 0 {
		return nil, []error{errors.New("compiler reasons unavailable: no command of the module at " + root +
			" matches the profiled program's main package (pass --source-dir with the checkout the service was built from)")}
	}
	return escape.Build(ctx, root, pkgs, escape.Options{})
}

// mainFiles are the source files of package main's functions in a's
// profiles, as the profiles record them.
func mainFiles(a *profiles.Analysis) []string {
	var files []string
	for _, p := range a.Profiles {
		for _, fn := range p.Function {
			if strings.HasPrefix(fn.Name, "main.") && fn.Filename != "" && !slices.Contains(files, fn.Filename) {
				files = append(files, fn.Filename)
			}
		}
	}
	slices.Sort(files)
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
