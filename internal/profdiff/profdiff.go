// Package profdiff says where two sets of profiles differ: it subtracts the
// base from the head, as pprof's -diff_base does, and ranks the functions
// whose own (flat) and inclusive (cum) cost changed most. Flat and cum are
// counted by the profiles package, so a diff's numbers agree with every
// other function table the tool shows.
package profdiff

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/profiles"
)

// A Pair names the profiles of one kind on each side of a comparison.
// Several files on a side (one per package) are merged.
type Pair struct {
	Kind       string   `json:"kind"` // "cpu" or "mem", or "profile" when given explicitly
	Base, Head []string `json:"-"`
}

// A Diff says where two profiles differ: the functions whose own (flat)
// and inclusive (cum) cost changed most, head minus base. Its JSON field
// names are stable.
type Diff struct {
	Kind string `json:"kind"`
	// SampleType is the compared value, e.g. "cpu/nanoseconds" or
	// "alloc_space/bytes".
	SampleType string `json:"sample_type"`
	BaseTotal  int64  `json:"base_total"`
	HeadTotal  int64  `json:"head_total"`
	// ByFlat and ByCum list the functions with the largest absolute
	// change in flat and cum value.
	ByFlat []FunctionDelta `json:"by_flat"`
	ByCum  []FunctionDelta `json:"by_cum"`
	// Profile is the head profile merged with the base scaled by -1, the
	// profile pprof's -diff_base builds; write it to open in pprof.
	Profile *profile.Profile `json:"-"`
}

// A FunctionDelta is one function's change between base and head.
type FunctionDelta struct {
	Function string `json:"function"`
	Flat     int64  `json:"flat"` // head minus base
	Cum      int64  `json:"cum"`  // head minus base
}

// Beside returns the profiles saved beside a results file, by kind.
func Beside(resultsPath string) map[string][]string {
	found := make(map[string][]string)
	if resultsPath == "" {
		return found
	}
	stem := strings.TrimSuffix(resultsPath, filepath.Ext(resultsPath))
	// 'perfscope bench' names them RESULTS.<package>.cpu.pb.gz and
	// RESULTS.<package>.mem.pb.gz.
	for _, kind := range []string{"cpu", "mem"} {
		matches, _ := filepath.Glob(globEscape(stem) + ".*." + kind + ".pb.gz")
		if len(matches) > 0 {
			slices.Sort(matches)
			found[kind] = matches
		}
	}
	return found
}

func globEscape(s string) string {
	return strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(s)
}

// Pairs decides which profiles to diff: the two given explicitly (base,
// head), else the profiles saved beside the first two results files for
// every kind both have. results are the paths of the compared results in
// order; "" stands for results that are not a file.
func Pairs(results, explicit []string) ([]Pair, error) {
	if len(explicit) == 2 {
		return []Pair{{Kind: "profile", Base: explicit[:1], Head: explicit[1:]}}, nil
	}
	if len(explicit) != 0 {
		return nil, fmt.Errorf("want two profiles, the base and the head; got %d", len(explicit))
	}
	if len(results) < 2 {
		return nil, nil
	}
	base, head := Beside(results[0]), Beside(results[1])
	var pairs []Pair
	for _, kind := range []string{"cpu", "mem"} {
		if len(base[kind]) > 0 && len(head[kind]) > 0 {
			pairs = append(pairs, Pair{Kind: kind, Base: base[kind], Head: head[kind]})
		}
	}
	return pairs, nil
}

// Compute merges each side's profiles, subtracts the base from the head as
// pprof's -diff_base does, and ranks functions by change. top limits each
// list (0 means 10).
func Compute(pair Pair, top int) (*Diff, error) {
	if top <= 0 {
		top = 10
	}
	base, err := readMerged(pair.Base)
	if err != nil {
		return nil, err
	}
	head, err := readMerged(pair.Head)
	if err != nil {
		return nil, err
	}
	st := compared(head)
	headFns, err := profiles.Functions(head, st, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pair.Head[0], err)
	}
	baseFns, err := profiles.Functions(base, headFns.SampleType, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pair.Base[0], err)
	}
	d := &Diff{Kind: pair.Kind, SampleType: headFns.SampleType + "/" + headFns.Unit, BaseTotal: baseFns.Total, HeadTotal: headFns.Total}

	d.Profile, err = profiles.Subtract(head, base)
	if err != nil {
		return nil, fmt.Errorf("profiles %s and %s cannot be compared: %w", pair.Base[0], pair.Head[0], err)
	}
	fns, err := profiles.Functions(d.Profile, headFns.SampleType, nil)
	if err != nil {
		return nil, fmt.Errorf("diff of %s and %s: %w", pair.Base[0], pair.Head[0], err)
	}
	all := make([]FunctionDelta, len(fns.Rows))
	for i, r := range fns.Rows {
		all[i] = FunctionDelta{r.Function, r.Flat, r.Cum}
	}
	abs := func(x int64) int64 { return max(x, -x) }
	rank := func(key func(FunctionDelta) int64) []FunctionDelta {
		s := slices.DeleteFunc(slices.Clone(all), func(f FunctionDelta) bool { return key(f) == 0 })
		slices.SortFunc(s, func(a, b FunctionDelta) int {
			return cmp.Or(cmp.Compare(abs(key(b)), abs(key(a))), strings.Compare(a.Function, b.Function))
		})
		return s[:min(top, len(s))]
	}
	d.ByFlat = rank(func(f FunctionDelta) int64 { return f.Flat })
	d.ByCum = rank(func(f FunctionDelta) int64 { return f.Cum })
	return d, nil
}

// compared is the sample type a diff compares: CPU time for CPU profiles,
// allocated bytes for memory profiles, else the profile's default ("").
func compared(p *profile.Profile) string {
	for _, t := range p.SampleType {
		if t.Type == profiles.SampleCPU || t.Type == profiles.SampleAllocSpace {
			return t.Type
		}
	}
	return ""
}

func readMerged(paths []string) (*profile.Profile, error) {
	var ps []*profile.Profile
	for _, path := range paths {
		p, _, err := fetch.ParseFile(context.Background(), path, fetch.Limits{})
		if err != nil {
			return nil, fmt.Errorf("not a valid profile: %w", err)
		}
		ps = append(ps, p)
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return nil, fmt.Errorf("merge profiles %s: %w", strings.Join(paths, ", "), err)
	}
	return p, nil
}
