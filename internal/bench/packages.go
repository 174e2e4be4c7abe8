package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// A Package is a Go package that has tests, and so may have benchmarks.
type Package struct {
	ImportPath string
	Dir        string
}

// ListPackages resolves package patterns in dir to the packages that have
// test files; packages without any cannot hold benchmarks.
func ListPackages(ctx context.Context, dir string, patterns []string) ([]Package, error) {
	args := append([]string{"list", "-e", "-json=ImportPath,Dir,TestGoFiles,XTestGoFiles,Error"}, patterns...)
	out, err := output(ctx, dir, "go", args...)
	if err != nil {
		return nil, fmt.Errorf("list packages: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var pkgs []Package
	for {
		var p struct {
			ImportPath                string
			Dir                       string
			TestGoFiles, XTestGoFiles []string
			Error                     *struct{ Err string }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("list packages: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		if len(p.TestGoFiles)+len(p.XTestGoFiles) > 0 {
			pkgs = append(pkgs, Package{p.ImportPath, p.Dir})
		}
	}
	return pkgs, nil
}

// ListBenchmarks returns the top-level benchmarks of the test binary bin
// that the -bench expression bench selects, in the order they run. Only
// the expression's first element (before any "/") is matched: a test
// binary's -test.list knows no sub-benchmarks.
func ListBenchmarks(ctx context.Context, bin Binary, bench string) ([]string, error) {
	top, _, _ := strings.Cut(bench, "/")
	if top == "" {
		top = "."
	}
	out, err := output(ctx, bin.Package.Dir, bin.Path, "-test.list", top)
	if err != nil {
		return nil, fmt.Errorf("list benchmarks of %s: %w", bin.Package.ImportPath, err)
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Benchmark") && !strings.ContainsAny(line, " \t") {
			names = append(names, line)
		}
	}
	return names, nil
}
