package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/bench"
	"github.com/perfscope/perfscope/internal/measure"
	"github.com/perfscope/perfscope/internal/store"
)

// A RecordedChange is a benchmark whose instructions/op changed beyond
// a threshold between two recorded commits, with where it changed
// (Explain, on the profiles the runs kept beside their counts), or why
// that cannot be said. Its JSON field names are stable.
type RecordedChange struct {
	Package   string `json:"package"`
	Benchmark string `json:"benchmark"`
	// Base and Head are the commits' instructions/op (the medians of
	// their samples); Change is Head/Base − 1, beyond Threshold.
	Base      float64 `json:"base"`
	Head      float64 `json:"head"`
	Change    float64 `json:"change"`
	Threshold float64 `json:"threshold"`
	// BaseRun and HeadRun are the benchmark runs whose profiles are
	// explained (each side's latest that kept one); 0 for a side that
	// kept none.
	BaseRun int64 `json:"base_run,omitempty"`
	HeadRun int64 `json:"head_run,omitempty"`
	// Explanation is where it changed; nil when Unexplained says why
	// not.
	Explanation *Explanation `json:"explanation,omitempty"`
	Unexplained string       `json:"unexplained,omitempty"`
}

// RecordedProfiles is what explaining recorded commits reads of the
// store.
type RecordedProfiles interface {
	InstructionProfiles(ctx context.Context, c store.Commit, f store.Filter) ([]store.InstructionProfile, error)
	InstructionProfileData(ctx context.Context, runID int64, pkg, name string) ([]byte, error)
}

// MaxRecordedExplained bounds the benchmarks one ExplainRecorded
// explains, each reading two profiles: the largest changes are.
const MaxRecordedExplained = 20

// noProfile says why a side has no profile to explain.
const noProfile = "counted before perfscope kept per-function profiles, or uploaded as a results file"

// ExplainRecorded finds every benchmark whose instructions/op moved by
// more than threshold (0.01 = 1%) between the recorded commits base and
// head, in CommitSamples' order, and explains each with Explain (top
// functions and lines; top ≤ 0 means DefaultExplainTop) from the
// profiles f's runs kept of it: the MaxRecordedExplained largest changes,
// the others saying how to see them. The error is for the store.
func ExplainRecorded(ctx context.Context, src RecordedProfiles, base, head *store.CommitSamples, f store.Filter, threshold float64, top int) ([]RecordedChange, error) {
	centers := func(cs *store.CommitSamples) map[[2]string]float64 {
		m := make(map[[2]string]float64)
		for _, s := range cs.Samples {
			if s.Unit == bench.UnitInstructions && len(s.Values) > 0 {
				m[[2]string{s.Package, s.Name}] = measure.Center(s.Values)
			}
		}
		return m
	}
	bc, hc := centers(base), centers(head)
	var out []RecordedChange
	for _, s := range head.Samples {
		k := [2]string{s.Package, s.Name}
		b, okb := bc[k]
		h, okh := hc[k]
		if s.Unit != bench.UnitInstructions || !okb || !okh || !moved(b, h, threshold, 0) {
			continue
		}
		out = append(out, RecordedChange{Package: s.Package, Benchmark: s.Name, Base: b, Head: h, Change: measure.Change(b, h), Threshold: threshold})
	}
	if len(out) == 0 {
		return nil, nil
	}
	largest := make([]int, len(out))
	for i := range largest {
		largest[i] = i
	}
	slices.SortStableFunc(largest, func(a, b int) int { return cmp.Compare(math.Abs(out[b].Change), math.Abs(out[a].Change)) })
	skip := make(map[int]bool)
	for _, i := range largest[min(len(largest), MaxRecordedExplained):] {
		skip[i] = true
	}
	runs := func(c store.Commit) (map[[2]string]int64, error) {
		ps, err := src.InstructionProfiles(ctx, c, f)
		if err != nil {
			return nil, err
		}
		m := make(map[[2]string]int64, len(ps))
		for _, p := range ps {
			m[[2]string{p.Package, p.Name}] = p.RunID
		}
		return m, nil
	}
	br, err := runs(base.Commit)
	if err != nil {
		return nil, err
	}
	hr, err := runs(head.Commit)
	if err != nil {
		return nil, err
	}
	for i := range out {
		rc := &out[i]
		k := [2]string{rc.Package, rc.Benchmark}
		rc.BaseRun, rc.HeadRun = br[k], hr[k]
		switch {
		case skip[i]:
			rc.Unexplained = "only the largest changes (MaxRecordedExplained) are explained at once; narrow the comparison by package or name to see this one"
			continue
		case rc.BaseRun == 0 && rc.HeadRun == 0:
			rc.Unexplained = "neither commit's count of it kept a per-function profile: " + noProfile
			continue
		case rc.BaseRun == 0:
			rc.Unexplained = "the base's count of it kept no per-function profile: " + noProfile
			continue
		case rc.HeadRun == 0:
			rc.Unexplained = "the head's count of it kept no per-function profile: " + noProfile
			continue
		}
		bp, err := recordedCounts(ctx, src, rc.BaseRun, rc.Package, rc.Benchmark)
		if err == nil {
			var hp *bench.CountedBenchmark
			if hp, err = recordedCounts(ctx, src, rc.HeadRun, rc.Package, rc.Benchmark); err == nil {
				rc.Explanation = Explain(bp, hp, top)
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch {
		case err != nil:
			rc.Unexplained = "its profiles could not be read: " + err.Error()
		case rc.Explanation == nil:
			rc.Unexplained = "its profiles hold no count"
		default:
			rc.Explanation.Package, rc.Explanation.Benchmark = rc.Package, rc.Benchmark
		}
	}
	return out, nil
}

// recordedCounts reads the counts of one benchmark's recorded profile.
func recordedCounts(ctx context.Context, src RecordedProfiles, runID int64, pkg, name string) (*bench.CountedBenchmark, error) {
	p, err := RecordedProfile(ctx, src, runID, pkg, name)
	if err != nil {
		return nil, err
	}
	counts, err := bench.CountsOfProfile(p)
	if err != nil {
		return nil, err
	}
	return &bench.CountedBenchmark{Counts: counts}, nil
}

// RecordedProfile reads the instruction profile run runID recorded of a
// benchmark (see bench.EncodeInstructionProfile).
func RecordedProfile(ctx context.Context, src RecordedProfiles, runID int64, pkg, name string) (*profile.Profile, error) {
	data, err := src.InstructionProfileData(ctx, runID, pkg, name)
	if err != nil {
		return nil, err
	}
	return bench.ParseInstructionProfile(ctx, data)
}

// RecordedDiff returns the per-operation instruction profiles (see
// bench.PerOperation) of one benchmark in two runs, for a diff flame
// graph of exact counts: head minus base, not normalized, since both are
// per operation. The error wraps store.ErrNoInstructionProfile when a
// run kept none.
func RecordedDiff(ctx context.Context, src RecordedProfiles, baseRun, headRun int64, pkg, name string) (base, head *profile.Profile, err error) {
	for _, side := range []struct {
		run int64
		p   **profile.Profile
	}{{baseRun, &base}, {headRun, &head}} {
		p, err := RecordedProfile(ctx, src, side.run, pkg, name)
		if err != nil {
			return nil, nil, err
		}
		if *side.p, err = bench.PerOperation(p); err != nil {
			return nil, nil, fmt.Errorf("instruction profile of %s %s in run %d: %w", pkg, name, side.run, err)
		}
	}
	if base == nil || head == nil {
		return nil, nil, errors.New("no instruction profiles")
	}
	return base, head, nil
}
