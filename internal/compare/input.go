package compare

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
	// Results are the parsed benchmark results, in file order.
	Results []*benchfmt.Result
	// Units is the unit metadata ("Unit ns/op assume=exact") read with
	// the results.
	Units benchfmt.UnitMetadataMap
	// Warnings are the malformed lines that were skipped, each a
	// *benchfmt.SyntaxError naming file and line.
	Warnings []error
}

// ErrNotFound is returned by a Resolver that does not know a reference, so
// that a chain of resolvers can try the next one.
var ErrNotFound = errors.New("not found")

// A Resolver turns a command-line reference (a file name, and later a stored
// run id or a commit) into an Input. It returns an error wrapping ErrNotFound
// when the reference is not its kind.
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

// Resolve implements Resolver: ref is a path to a file in Go benchmark format.
func (FileResolver) Resolve(ctx context.Context, ref string) (*Input, error) {
	f, err := os.Open(ref)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", ref, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open benchmark file: %w", err)
	}
	defer f.Close()
	in, err := ReadInput(f, ref, ref)
	if err != nil {
		return nil, err
	}
	in.Path = ref
	return in, nil
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
		relabel(in)
		inputs = append(inputs, in)
	}
	return inputs, nil
}

// relabel sets the ".file" key of every result to the input's label.
func relabel(in *Input) {
	for _, r := range in.Results {
		r.SetConfig(".file", in.Label)
	}
}

// ReadInput parses Go benchmark format from r. Malformed lines do not stop
// reading: they are returned in Input.Warnings with file name and line.
// name is used in those messages; label becomes the ".file" key.
func ReadInput(r io.Reader, name, label string) (*Input, error) {
	res, err := bench.Parse(r, name, ".file", label)
	if err != nil {
		return nil, err
	}
	return &Input{Label: label, Results: res.Results, Units: res.Units, Warnings: res.Warnings}, nil
}
