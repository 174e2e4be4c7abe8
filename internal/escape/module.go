package escape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// A Module is a Go module as the go command sees it, with the settings
// a build in it uses.
type Module struct {
	// Root is the module's root directory, where its go.mod is.
	Root string
	opts Options
	env  map[string]string
}

// FindModule returns the Go module containing dir, as the go command
// finds it with opts.
func FindModule(ctx context.Context, dir string, opts Options) (*Module, error) {
	env, err := goEnv(ctx, dir, opts, keyEnv)
	if err != nil {
		return nil, fmt.Errorf("find the module at %s: %w", dir, err)
	}
	gomod := env["GOMOD"]
	if gomod == "" || gomod == os.DevNull {
		return nil, fmt.Errorf("%s is not inside a Go module: name the packages to build, or use a module directory", dir)
	}
	return &Module{Root: filepath.Dir(gomod), opts: opts, env: env}, nil
}

// Build is Build(ctx, m.Root, pkgs, opts) with the options m was found
// with. It asks the go command one question fewer: FindModule's answer
// holds the settings the cache's key needs.
func (m *Module) Build(ctx context.Context, pkgs []string) (*Index, []error) {
	diags, warns := build(ctx, m.Root, pkgs, m.env, m.opts)
	return NewIndex(diags), warns
}

// Commands returns the commands (main packages) of m, the packages to build
// when none are named: their builds cover every package of the module they
// import. A module without a command is
// an error, because the profiled program is a command and guessing among
// libraries would be wrong.
func (m *Module) Commands(ctx context.Context) ([]string, error) {
	listed, err := listPackages(ctx, m.Root, []string{"./..."}, false, m.opts)
	if err != nil {
		return nil, fmt.Errorf("find packages in %s: %w", m.Root, err)
	}
	var pkgs []string
	for _, p := range listed {
		if p.Name == "main" && p.Error == nil {
			pkgs = append(pkgs, p.ImportPath)
		}
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no main package in the module at %s: name the packages to build", m.Root)
	}
	return pkgs, nil
}

// goEnv asks the go command for the named settings as it would use them
// in dir.
func goEnv(ctx context.Context, dir string, opts Options, names []string) (map[string]string, error) {
	var stdout, stderr bytes.Buffer
	cmd := goCommand(ctx, dir, opts, append([]string{"env", "-json"}, names...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := firstLine(stderr.String()); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, fmt.Errorf("go env: %w", err)
	}
	env := map[string]string{}
	if err := json.Unmarshal(stdout.Bytes(), &env); err != nil {
		return nil, fmt.Errorf("read go env output: %w", err)
	}
	return env, nil
}
