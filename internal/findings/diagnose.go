package findings

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/profiles"
)

// Defaults of Options.
const (
	// DefaultMaxEvidence is how many lines a finding shows.
	DefaultMaxEvidence = 3
	// DefaultMaxPerRule is how many findings one rule reports; the
	// heaviest come first.
	DefaultMaxPerRule = 3
)

// Options configure Diagnose. The zero value runs every rule with the
// defaults.
type Options struct {
	// SourceDir is a checkout of the profiled program: build paths in the
	// profiles are mapped under it (see profiles.LocateSource) to show
	// source lines and to check that the source is what was profiled.
	// Empty means files are read where the profiles say they were built.
	SourceDir string
	// ConfineSource reads source only inside SourceDir (see
	// profiles.SourceOptions.Confined).
	ConfineSource bool
	// AvailableCores is how many CPUs the target could use (its
	// GOMAXPROCS); 0 when unknown. The idle rule compares the cores used
	// with it.
	AvailableCores float64
	// MaxEvidence bounds the lines per finding; 0 means DefaultMaxEvidence.
	MaxEvidence int
	// MaxPerRule bounds the findings per rule; 0 means DefaultMaxPerRule.
	MaxPerRule int
	// Rules, when not empty, runs only the rules with these ids.
	Rules []string
}

func (o Options) withDefaults() Options {
	if o.MaxEvidence <= 0 {
		o.MaxEvidence = DefaultMaxEvidence
	}
	if o.MaxPerRule <= 0 {
		o.MaxPerRule = DefaultMaxPerRule
	}
	return o
}

// env is what the rules read: the analysis, its profiles decoded once,
// the escape index and the source.
type env struct {
	a     *profiles.Analysis
	ix    *escape.Index
	opts  Options
	profs map[string]*prof
	src   *profiles.SourceFiles
	cum   map[string]*site // cumCPU, once computed
	// explained holds the lines (file and line only) that the findings
	// of the rules run so far name, for the residual rules.
	explained map[siteKey]bool
}

// resource returns the profile measuring r and the value index, or nil.
func (e *env) resource(r Resource) (*prof, int) {
	kind, st, _ := r.source()
	pr := e.profs[kind]
	if pr == nil {
		return nil, 0
	}
	vi, err := profiles.SampleIndex(pr.p, st)
	if err != nil {
		return nil, 0
	}
	return pr, vi
}

// total is the profile total of r, the total the report's tables take
// their shares of; 0 when the run lacks the profile.
func (e *env) total(r Resource) int64 {
	pr, vi := e.resource(r)
	if pr == nil {
		return 0
	}
	return profiles.SampleTotal(pr.p, vi)
}

func (e *env) share(r Resource, v int64) float64 { return profiles.Share(abs(v), e.total(r)) }

// minCPUSamples is the fewest CPU samples a finding rests on: fewer are
// noise, whatever their share.
const minCPUSamples = 5

// enoughCPU reports whether v, a CPU time, spans at least minCPUSamples
// sampling periods.
func (e *env) enoughCPU(v int64) bool {
	if pr, _ := e.resource(CPU); pr == nil {
		return false
	}
	return abs(v) >= minCPUSamples*e.cpuPeriod()
}

// cpuPeriod is the CPU profile's sampling period in nanoseconds; the Go
// runtime's 100 Hz when the profile does not say.
func (e *env) cpuPeriod() int64 {
	if pr, _ := e.resource(CPU); pr != nil && pr.p.Period > 0 {
		return pr.p.Period
	}
	return 1e7
}

// minAllocSamples is the fewest allocation samples a finding on
// allocations rests on, as minCPUSamples is for CPU.
const minAllocSamples = 5

// enoughAllocs reports whether b, allocated bytes, spans at least
// minAllocSamples sampling periods of the allocation profile.
func (e *env) enoughAllocs(b int64) bool {
	pr, _ := e.resource(AllocBytes)
	if pr == nil {
		return false
	}
	period := pr.p.Period
	if period <= 0 {
		period = 512 << 10 // the Go runtime's default MemProfileRate
	}
	return abs(b) >= minAllocSamples*period
}

func (e *env) measure(r Resource, v int64) Measure {
	_, _, unit := r.source()
	return Measure{Resource: r, Value: v, Unit: unit, Share: e.share(r, v)}
}

// Diagnose runs the rules on an analysis and returns their findings,
// ranked by severity, heaviest first. ix holds the compiler's diagnostics
// for the profiled program's source and may be nil: findings then come
// from the profiles alone and say that compiler reasons need the source.
// Problems that leave findings incomplete (a profile missing, source that
// does not match the profile) are returned as warnings; Diagnose goes on.
func Diagnose(a *profiles.Analysis, ix *escape.Index, opts Options) ([]Finding, []error) {
	if a == nil {
		return nil, []error{errors.New("diagnose: no analysis")}
	}
	opts = opts.withDefaults()
	var warns []error
	for _, id := range opts.Rules {
		if _, ok := Lookup(id); !ok {
			warns = append(warns, fmt.Errorf("diagnose: unknown rule %q", id))
		}
	}
	c := a.Classifier
	if c == nil {
		c = profiles.NewClassifier(a.Options.Module, slices.Collect(maps.Values(a.Profiles))...)
	}
	e := &env{a: a, ix: ix, opts: opts, profs: map[string]*prof{}, src: profiles.NewSourceFiles(profiles.SourceOptions{SourceDir: opts.SourceDir, Confined: opts.ConfineSource})}
	for _, kind := range slices.Sorted(maps.Keys(a.Profiles)) {
		if p := a.Profiles[kind]; p != nil {
			e.profs[kind] = newProf(kind, p, c)
		}
	}
	if len(e.profs) == 0 {
		warns = append(warns, errors.New("diagnose: the run has no profiles, so there is nothing to diagnose"))
		return nil, warns
	}

	// Residual rules run last, on what the others leave unexplained; the
	// others then run even when not selected, so a residual rule reports
	// the same lines whichever rules are asked for.
	rules := Rules()
	slices.SortStableFunc(rules, func(a, b Rule) int { return cmp.Compare(boolRank(a.residual), boolRank(b.residual)) })
	residual := slices.ContainsFunc(rules, func(r Rule) bool { return r.residual && selected(opts.Rules, r.ID) })
	e.explained = map[siteKey]bool{}
	var out []Finding
	for _, r := range rules {
		if !selected(opts.Rules, r.ID) && (r.residual || !residual) {
			continue
		}
		fs := r.check(e, &r)
		for _, f := range fs {
			for _, ev := range f.Evidence {
				if r.symptom {
					break
				}
				e.explained[siteKey{file: ev.File, line: ev.Line}] = true
			}
		}
		if !selected(opts.Rules, r.ID) {
			continue
		}
		slices.SortStableFunc(fs, byRank)
		if len(fs) > opts.MaxPerRule {
			fs = fs[:opts.MaxPerRule]
		}
		for i := range fs {
			if len(fs[i].Evidence) > opts.MaxEvidence {
				fs[i].Evidence = fs[i].Evidence[:opts.MaxEvidence]
			}
			if r.compiler && ix == nil {
				fs[i].Notes = append(fs[i].Notes, "Compiler reasons are not shown: they need the program's source (pass --source-dir).")
			}
		}
		out = append(out, fs...)
	}
	warns = append(warns, e.checkSource(out)...)
	slices.SortStableFunc(out, byRank)
	return out, warns
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// byRank orders findings by severity, heaviest first, then by rule and
// place so equal findings keep a stable order.
func byRank(a, b Finding) int {
	if c := cmp.Compare(b.Severity, a.Severity); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Rule, b.Rule); c != 0 {
		return c
	}
	var wa, wb string
	if len(a.Evidence) > 0 {
		wa = a.Evidence[0].Function + a.Evidence[0].Where()
	}
	if len(b.Evidence) > 0 {
		wb = b.Evidence[0].Function + b.Evidence[0].Where()
	}
	return cmp.Compare(wa, wb)
}
