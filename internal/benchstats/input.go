package benchstats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/bench"
)

// An Input is one side of a comparison: benchmark results under one label.
// The label becomes the ".file" key, so by default every Input is a column.
type Input struct {
	// Label names the input in table headers (benchstat's ".file").
	Label string
	// Path is where the results came from, for messages and for finding
	// profiles saved beside a results file. It is empty for inputs that
	// do not come from a file.
	Path string
	// Read streams the input's records to add, in order: each
	// *benchfmt.Result (which add does not keep, so it may be reused),
	// *benchfmt.UnitMetadata, and *benchfmt.SyntaxError for a malformed
	// line that was skipped. Compare calls it once; it returns an error
	// only when the input cannot be read at all.
	Read func(ctx context.Context, add func(benchfmt.Record)) error
}

// ErrNotFound is returned by a Resolver that does not know a reference, so
// that a chain of resolvers can try the next one.
var ErrNotFound = errors.New("not found")

// A Resolver turns a command-line reference (a file name, a stored commit)
// into an Input. It returns an error wrapping ErrNotFound when the
// reference is not its kind.
type Resolver interface {
	Resolve(ctx context.Context, ref string) (*Input, error)
}

// Resolvers tries each Resolver in order and returns the first Input found.
type Resolvers []Resolver

// Resolve implements Resolver.
func (rs Resolvers) Resolve(ctx context.Context, ref string) (*Input, error) {
	for _, r := range rs {
		in, err := r.Resolve(ctx, ref)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		return in, err
	}
	return nil, fmt.Errorf("%s: no benchmark file, run or commit by that name: %w", ref, ErrNotFound)
}

// FileResolver resolves references that name benchmark files.
type FileResolver struct{}

// Resolve implements Resolver: ref is a path to a file in Go benchmark
// format. The file is read when the comparison streams it.
func (FileResolver) Resolve(ctx context.Context, ref string) (*Input, error) {
	st, err := os.Stat(ref)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", ref, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open benchmark file: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("open benchmark file %s: is a directory", ref)
	}
	return &Input{Label: ref, Path: ref, Read: func(ctx context.Context, add func(benchfmt.Record)) error {
		f, err := os.Open(ref)
		if err != nil {
			return fmt.Errorf("open benchmark file: %w", err)
		}
		defer f.Close()
		return bench.Scan(contextReader{ctx, f}, ref, add)
	}}, nil
}

// contextReader stops a read once ctx is done, so a cancelled comparison
// does not read the rest of a large file.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// TextInput returns an Input reading Go benchmark format from text, labelled
// name; name also names the input in messages about malformed lines.
func TextInput(name, text string) *Input {
	return &Input{Label: name, Read: func(ctx context.Context, add func(benchfmt.Record)) error {
		return bench.Scan(strings.NewReader(text), name, add)
	}}
}

// ResolveAll resolves command-line arguments into Inputs the way benchstat
// names its columns: an argument "label=ref" sets the label; a reference
// given more than once is told apart as "ref#0", "ref#1".
func ResolveAll(ctx context.Context, r Resolver, args []string) ([]*Input, error) {
	unlabelled := make(map[string]int)
	for _, a := range args {
		if !strings.Contains(a, "=") {
			unlabelled[a]++
		}
	}
	seen := make(map[string]int)
	var inputs []*Input
	for _, a := range args {
		label, ref, labelled := strings.Cut(a, "=")
		if !labelled {
			label, ref = a, a
			if unlabelled[a] > 1 {
				label = fmt.Sprintf("%s#%d", a, seen[a])
				seen[a]++
			}
		}
		if ref == "" {
			return nil, fmt.Errorf("%q: empty reference after label", a)
		}
		in, err := r.Resolve(ctx, ref)
		if err != nil {
			return nil, err
		}
		in.Label = label
		inputs = append(inputs, in)
	}
	return inputs, nil
}
