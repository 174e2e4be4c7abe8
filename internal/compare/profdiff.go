package compare

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/benchstats"
	"github.com/perfscope/perfscope/internal/report"
)

// A ProfilePair names the profiles of one kind on each side of a
// comparison. Several files on a side (one per package) are merged.
type ProfilePair struct {
	Kind       string   `json:"kind"` // "cpu" or "mem", or "profile" when given explicitly
	Base, Head []string `json:"-"`
}

// A ProfileDiff says where two profiles differ: the functions whose own
// (flat) and inclusive (cum) cost changed most, head minus base.
type ProfileDiff struct {
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
	// Diff is the head profile merged with the base scaled by -1, the
	// profile pprof's -diff_base builds; write it to open in pprof.
	Diff *profile.Profile `json:"-"`
}

// A FunctionDelta is one function's change between base and head.
type FunctionDelta struct {
	Function string `json:"function"`
	Flat     int64  `json:"flat"` // head minus base
	Cum      int64  `json:"cum"`  // head minus base
}

// ProfilesBeside returns the profiles saved beside a results file, by kind.
func ProfilesBeside(resultsPath string) map[string][]string {
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

// ProfilePairs decides which profiles to diff: the two given explicitly
// (base, head), else the profiles saved beside the first two inputs for
// every kind both have.
func ProfilePairs(inputs []*benchstats.Input, explicit []string) ([]ProfilePair, error) {
	if len(explicit) == 2 {
		return []ProfilePair{{Kind: "profile", Base: explicit[:1], Head: explicit[1:]}}, nil
	}
	if len(explicit) != 0 {
		return nil, fmt.Errorf("want two profiles, the base and the head; got %d", len(explicit))
	}
	if len(inputs) < 2 {
		return nil, nil
	}
	base, head := ProfilesBeside(inputs[0].Path), ProfilesBeside(inputs[1].Path)
	var pairs []ProfilePair
	for _, kind := range []string{"cpu", "mem"} {
		if len(base[kind]) > 0 && len(head[kind]) > 0 {
			pairs = append(pairs, ProfilePair{Kind: kind, Base: base[kind], Head: head[kind]})
		}
	}
	return pairs, nil
}

// DiffProfiles merges each side's profiles, subtracts the base from the
// head as pprof's -diff_base does, and ranks functions by change. top
// limits each list (0 means 10).
func DiffProfiles(pair ProfilePair, top int) (*ProfileDiff, error) {
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
	idx, st, err := sampleIndex(head)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pair.Head[0], err)
	}
	bidx, _, err := sampleIndex(base)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pair.Base[0], err)
	}
	d := &ProfileDiff{Kind: pair.Kind, SampleType: st, BaseTotal: total(base, bidx), HeadTotal: total(head, idx)}

	neg := base.Copy()
	neg.Scale(-1)
	diff, err := profile.Merge([]*profile.Profile{head, neg})
	if err != nil {
		return nil, fmt.Errorf("profiles %s and %s cannot be compared: %w", pair.Base[0], pair.Head[0], err)
	}
	d.Diff = diff
	didx, _, err := sampleIndex(diff)
	if err != nil {
		return nil, err
	}
	flat, cum := byFunction(diff, didx)
	var all []FunctionDelta
	for fn := range cum {
		all = append(all, FunctionDelta{fn, flat[fn], cum[fn]})
	}
	abs := func(x int64) int64 { return max(x, -x) }
	rank := func(key func(FunctionDelta) int64) []FunctionDelta {
		s := slices.Clone(all)
		slices.SortFunc(s, func(a, b FunctionDelta) int {
			return cmp.Or(cmp.Compare(abs(key(b)), abs(key(a))), strings.Compare(a.Function, b.Function))
		})
		s = slices.DeleteFunc(s, func(f FunctionDelta) bool { return key(f) == 0 })
		return s[:min(top, len(s))]
	}
	d.ByFlat = rank(func(f FunctionDelta) int64 { return f.Flat })
	d.ByCum = rank(func(f FunctionDelta) int64 { return f.Cum })
	return d, nil
}

func readMerged(paths []string) (*profile.Profile, error) {
	var ps []*profile.Profile
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("open profile: %w", err)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s is not a valid profile: %w", path, err)
		}
		ps = append(ps, p)
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return nil, fmt.Errorf("merge profiles %s: %w", strings.Join(paths, ", "), err)
	}
	return p, nil
}

// sampleIndex picks the value to compare: CPU time for CPU profiles,
// allocated bytes for memory profiles, else the profile's default.
func sampleIndex(p *profile.Profile) (int, string, error) {
	if len(p.SampleType) == 0 {
		return 0, "", fmt.Errorf("profile has no sample types")
	}
	want := p.DefaultSampleType
	for _, t := range p.SampleType {
		if t.Type == "cpu" || t.Type == "alloc_space" {
			want = t.Type
			break
		}
	}
	for i, t := range p.SampleType {
		if t.Type == want {
			return i, t.Type + "/" + t.Unit, nil
		}
	}
	i := len(p.SampleType) - 1
	return i, p.SampleType[i].Type + "/" + p.SampleType[i].Unit, nil
}

func total(p *profile.Profile, idx int) int64 {
	var t int64
	for _, s := range p.Sample {
		t += s.Value[idx]
	}
	return t
}

// byFunction sums each sample into its leaf function (flat) and, once per
// sample, into every function on its stack (cum), as pprof's -functions
// granularity does.
func byFunction(p *profile.Profile, idx int) (flat, cum map[string]int64) {
	flat, cum = make(map[string]int64), make(map[string]int64)
	seen := make(map[string]bool)
	for _, s := range p.Sample {
		v := s.Value[idx]
		clear(seen)
		for li, loc := range s.Location {
			for i, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				name := line.Function.Name
				if li == 0 && i == 0 {
					flat[name] += v
				}
				if !seen[name] {
					seen[name] = true
					cum[name] += v
				}
			}
		}
	}
	return flat, cum
}

// WriteProfileDiffsText renders profile diffs after the text tables.
func WriteProfileDiffsText(w io.Writer, diffs []*ProfileDiff) error {
	var b strings.Builder
	for _, d := range diffs {
		fmt.Fprintf(&b, "\nwhere it changed (%s profile, %s, head − base): total %s → %s\n", d.Kind, d.SampleType, formatValue(d.BaseTotal, d.SampleType, false), formatValue(d.HeadTotal, d.SampleType, false))
		for _, list := range []struct {
			title string
			fs    []FunctionDelta
		}{{"by flat", d.ByFlat}, {"by cum", d.ByCum}} {
			if len(list.fs) == 0 {
				continue
			}
			o := report.TextTable{Indent: "  ", Columns: []report.TextColumn{{Heading: list.title}, {Heading: "flat Δ", Align: report.Right}, {Heading: "cum Δ", Align: report.Right}}}
			for _, f := range list.fs {
				o.AddRow(f.Function, formatValue(f.Flat, d.SampleType, true), formatValue(f.Cum, d.SampleType, true))
			}
			if err := o.WriteText(&b); err != nil {
				return err
			}
		}
		if len(d.ByFlat) == 0 && len(d.ByCum) == 0 {
			b.WriteString("  no function changed\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteProfileDiffsMarkdown renders profile diffs after the Markdown tables.
func WriteProfileDiffsMarkdown(w io.Writer, diffs []*ProfileDiff) error {
	var b strings.Builder
	for _, d := range diffs {
		fmt.Fprintf(&b, "#### Where it changed (%s profile, %s)\n\nTotal %s → %s.\n\n", d.Kind, d.SampleType, formatValue(d.BaseTotal, d.SampleType, false), formatValue(d.HeadTotal, d.SampleType, false))
		b.WriteString("| function | flat Δ | cum Δ |\n| --- | --: | --: |\n")
		for _, f := range d.ByFlat {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Function, formatValue(f.Flat, d.SampleType, true), formatValue(f.Cum, d.SampleType, true))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// formatValue prints a profile value in its unit: durations for
// nanoseconds, binary prefixes for bytes.
func formatValue(v int64, sampleType string, signed bool) string {
	sign := ""
	if signed && v > 0 {
		sign = "+"
	}
	switch {
	case strings.HasSuffix(sampleType, "/nanoseconds"):
		return sign + time.Duration(v).Round(time.Microsecond).String()
	case strings.HasSuffix(sampleType, "/bytes"):
		a := math.Abs(float64(v))
		s := "-"
		if v >= 0 {
			s = sign
		}
		for _, u := range []string{"B", "KiB", "MiB", "GiB"} {
			if a < 1024 || u == "GiB" {
				if u == "B" {
					return fmt.Sprintf("%s%.0f%s", s, a, u)
				}
				return fmt.Sprintf("%s%.1f%s", s, a, u)
			}
			a /= 1024
		}
	}
	return fmt.Sprintf("%s%d", sign, v)
}
