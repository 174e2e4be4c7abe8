package profiles

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/run"
)

// DefaultTop is the number of rows per table when Options.Top is 0.
const DefaultTop = 10

// Options configure Analyze. The zero value is the default report.
type Options struct {
	// Top is the number of ranked rows per table; 0 means DefaultTop.
	// Folded rows come on top of it.
	Top int `json:"top"`
	// All shows every function as pprof would: no folding of the runtime,
	// the standard library and dependencies, and allocation and wait
	// sites at the leaf frame (pprof -lines) instead of the innermost
	// user frame. The profiler's own samples are left out all the same:
	// they are the measurement's cost, not the target's.
	All bool `json:"all"`
	// Route keeps only the CPU and goroutine samples whose http.route
	// label matches (see NewRouteMatcher); the other profiles carry no
	// labels and are shown whole. CPU shares then are fractions of the
	// route's CPU.
	Route string `json:"route,omitempty"`
	// Module is the target's module path, when known; see Classifier.
	Module string `json:"module,omitempty"`
}

func (o Options) top() int {
	if o.Top <= 0 {
		return DefaultTop
	}
	return o.Top
}

// An Analysis is everything a report shows about a set of profiles over
// one window (a saved run, or profiles scraped over a time range),
// computed from the profiles and the load result when there is one. Its
// JSON field names are stable; sections whose profile is missing are
// omitted, and ProfileErrors and Warnings say why.
type Analysis struct {
	// Run describes what was analysed: a saved run's run.json, or for
	// profiles from elsewhere the target, start and window with no id
	// (see Set). Its load is the set's: nil when there was none.
	Run        run.Run     `json:"run"`
	Options    Options     `json:"options"`
	PerRequest *PerRequest `json:"per_request,omitempty"`
	CPU        *CPU        `json:"cpu,omitempty"`
	Allocs     *Allocs     `json:"allocs,omitempty"`
	// Block and Mutex rank wait sites by delay. A block site is where a
	// goroutine waited (channel operation, select, Lock, WaitGroup.Wait);
	// a mutex site is where a contended lock was released, which the Go
	// runtime charges with the waiters' delay: the holder that made
	// others wait.
	Block      *SiteTable   `json:"block,omitempty"`
	Mutex      *SiteTable   `json:"mutex,omitempty"`
	Goroutines *Goroutines  `json:"goroutines,omitempty"`
	Routes     []RouteShare `json:"routes,omitempty"`
	// Source holds per-line listings of the hottest user functions
	// (pprof's list), when asked for: see SourceListings.
	Source []*SourceView `json:"source,omitempty"`
	// Notes are the capture's plain-language remarks (run.json's), and
	// NoLoadNote when the profiles came without a load result.
	Notes []string `json:"notes,omitempty"`
	// ProfileErrors are profiles the set lacks or that cover less than
	// the window, as recorded at capture time or found when opening them.
	ProfileErrors []ProfileError `json:"profile_errors,omitempty"`
	// Warnings are problems met while analysing; the sections they
	// concern are missing or partial.
	Warnings []string `json:"warnings,omitempty"`

	// Profiles holds the parsed profiles by kind (run.Kind*), for
	// consumers that need more than the tables, such as diagnosis rules
	// or a per-line listing. They are the profiles the tables were
	// computed from: the samples of the profiler's own work are left out
	// (see DropProfilerSamples). Route filtering is not applied to them.
	Profiles map[string]*profile.Profile `json:"-"`
	// Classifier is the classifier the tables were made with.
	Classifier *Classifier `json:"-"`
}

// A ProfileError says why one profile of the run is missing or partial.
type ProfileError struct {
	Kind  string `json:"kind"`
	Error string `json:"error"`
}

// PerRequest divides what the profiles measured by the requests served
// while they were taken. The request count of a profile's window is
// estimated as the load's throughput times the window's length, since the
// load result counts requests for the whole load only. Fields are nil when
// the profile or the load is missing.
type PerRequest struct {
	// Throughput is the load's completed requests per second.
	Throughput   float64  `json:"throughput_rps"`
	AllocObjects *float64 `json:"alloc_objects,omitempty"`
	AllocBytes   *float64 `json:"alloc_bytes,omitempty"`
	CPUSeconds   *float64 `json:"cpu_seconds,omitempty"`
}

// CPU is the CPU profile's part of an analysis.
type CPU struct {
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	// Total is the CPU of the samples analysed: the route's when
	// Options.Route is set.
	Total int64 `json:"total"`
	// ProfileTotal is the CPU of the whole profile.
	ProfileTotal int64 `json:"profile_total"`
	// Seconds is the wall time the profile covers.
	Seconds float64 `json:"seconds"`
	// Cores is the average number of CPUs the target kept busy:
	// ProfileTotal over Seconds, when the unit is nanoseconds.
	Cores float64    `json:"cores,omitempty"`
	Flat  *FuncTable `json:"top_flat"`
	Cum   *FuncTable `json:"top_cum"`
	// Lines ranks source lines by CPU (count: samples, amount: cpu
	// nanoseconds), charged like allocation sites: to the innermost user
	// line, with the call it makes there (runtime.concatstring2,
	// fmt.Sprintf, ...). It is where the user's code spends CPU, its own
	// or through what it calls.
	Lines *SiteTable `json:"lines,omitempty"`
	// GC is measured on the whole profile even with a route filter: the
	// collector serves every route and its workers carry no labels.
	GC *GCShare `json:"gc,omitempty"`
	// Syscalls splits the CPU spent in system calls (the syscall class's
	// flat CPU) by the path that led to them; like the tables, it covers
	// the route's samples when Options.Route is set.
	Syscalls *Syscalls `json:"syscalls,omitempty"`
}

// Allocs is the allocation profile's part of an analysis: what was
// allocated during the window (freed or not).
type Allocs struct {
	Objects int64   `json:"objects"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	// ByObjects and ByBytes rank allocation sites (source lines) by
	// objects and by bytes.
	ByObjects *SiteTable `json:"by_objects"`
	ByBytes   *SiteTable `json:"by_bytes"`
}

// A Set is what Analyze computes from: the profiles of one target over
// one window, and what is known of how they were taken. A saved run is one
// source of a set (ReadRun); profiles scraped from a live service and
// merged over a time range are another, with no load result.
type Set struct {
	// Profiles are the parsed profiles by kind (run.Kind*), each read
	// through fetch's bounded reader. Analyze does not modify them.
	Profiles map[string]*profile.Profile
	// Missing are the profiles the set lacks or that cover less than the
	// window, and why; they become the analysis's ProfileErrors.
	Missing []ProfileError
	// Problems are the errors met while reading the set; Analyze passes
	// them on as warnings.
	Problems []error
	// Start is when the window opened; Seconds is how long it lasted.
	Start   time.Time
	Seconds float64
	// KindSeconds is how long each profile covers, by kind, when it is
	// known and may differ from the window (a CPU profile cut short).
	// Kinds absent fall back to the profile's own duration, then to
	// Seconds.
	KindSeconds map[string]float64
	// Load is the load result measured over the window; nil when the
	// profiles were not taken under a load perfscope generated (a live
	// service's own traffic). The analysis then has no per-request
	// figures and a note says why.
	Load *loadgen.Result
	// Target is the profiled service (the URL the load was sent to or
	// the profiles were scraped from); TargetCPUs is how many CPUs it
	// could use, 0 when unknown.
	Target     string
	TargetCPUs int
	// Notes are plain-language remarks of whoever took the profiles.
	Notes []string
	// Run is the saved run the set was read from, nil for any other
	// source. Its record (id, directory, command line, build) heads the
	// analysis; the set's own fields above take precedence over the
	// record's, so the report describes what was analysed.
	Run *run.Run
}

// ReadRun reads a saved run's profiles into a Set: the run is one source
// of profiles among others. A profile that is missing or cannot be read is
// left out, with the reason in Missing (and in Problems when reading it
// failed), as recorded at capture time or found when opening it.
func ReadRun(r *run.Run) Set {
	s := Set{
		Profiles:    map[string]*profile.Profile{},
		Start:       r.Start.Add(time.Duration(r.Warmup * float64(time.Second))),
		Seconds:     r.Window,
		KindSeconds: r.Seconds(),
		Load:        r.Load,
		Target:      r.Target,
		TargetCPUs:  r.TargetCPUs,
		Notes:       r.Notes,
		Run:         r,
	}
	for _, pf := range r.Profiles {
		if pf.Error != "" {
			s.Missing = append(s.Missing, ProfileError{Kind: pf.Kind, Error: pf.Error})
		}
		if pf.File == "" {
			continue
		}
		p, err := r.Open(pf.Kind)
		if err != nil {
			s.Problems = append(s.Problems, err)
			s.Missing = append(s.Missing, ProfileError{Kind: pf.Kind, Error: err.Error()})
			continue
		}
		s.Profiles[pf.Kind] = p
	}
	return s
}

// NoLoadNote is the note of an analysis whose profiles came without a load
// result: what it cannot say.
const NoLoadNote = "no load result: the profiles were not taken under a load perfscope measured, so there are no throughput, latency or per-request figures"

// Analyze builds everything a report shows from a set of profiles. A
// profile the set lacks leaves its section out; the set's problems and
// the computation's come back both as errors and inside the Analysis
// (ProfileErrors, Warnings), so analysis goes on and the reader is told.
func Analyze(s Set, opts Options) (*Analysis, []error) {
	opts.Top = opts.top() // record the limit used, not "default"
	a := &Analysis{
		Run:           s.record(),
		Options:       opts,
		Notes:         slices.Clone(s.Notes),
		ProfileErrors: slices.Clone(s.Missing),
		Profiles:      map[string]*profile.Profile{},
	}
	if s.Load == nil {
		a.Notes = append(a.Notes, NoLoadNote)
	}
	for kind, p := range s.Profiles {
		if p == nil {
			continue
		}
		// The profiler's own work is not the target's (see
		// DropProfilerSamples): it is left out here, once, so that the
		// tables, the listings and the findings all charge the same
		// samples and compute their shares over the same totals.
		a.Profiles[kind], _ = DropProfilerSamples(p)
	}
	errs := append(slices.Clone(s.Problems), a.compute(s.KindSeconds)...)
	for _, err := range errs {
		a.Warnings = append(a.Warnings, err.Error())
	}
	return a, errs
}

// record is the description of what was analysed: the saved run's record
// when the set came from one, with the set's own fields in it.
func (s Set) record() run.Run {
	var r run.Run
	if s.Run != nil {
		r = *s.Run
	} else {
		r.Start = s.Start
		if s.Seconds > 0 {
			r.End = s.Start.Add(time.Duration(s.Seconds * float64(time.Second)))
		}
	}
	r.Window = s.Seconds
	r.Load = s.Load
	r.Target = s.Target
	r.TargetCPUs = s.TargetCPUs
	r.Notes = s.Notes
	return r
}

// compute fills in the sections from a.Profiles; it returns the
// computation's warnings, not yet recorded in a.
func (a *Analysis) compute(seconds map[string]float64) []error {
	var errs []error
	warn := func(section string, err error) {
		errs = append(errs, fmt.Errorf("%s: %w", section, err))
	}
	ps := a.Profiles
	all := make([]*profile.Profile, 0, len(ps))
	for _, kind := range slices.Sorted(maps.Keys(ps)) {
		all = append(all, ps[kind])
	}
	a.Classifier = NewClassifier(a.Options.Module, all...)
	n, focus := a.Options.top(), !a.Options.All
	attr := AttributeUser
	if a.Options.All {
		attr = AttributeLeaf
	}
	var route *RouteMatcher
	if a.Options.Route != "" {
		route = NewRouteMatcher(a.Options.Route)
	}
	secs := func(kind string) float64 {
		if s := seconds[kind]; s > 0 {
			return s
		}
		if s := sampleDuration(ps[kind]); s > 0 {
			return s
		}
		return a.Run.Window
	}

	if p := ps[run.KindCPU]; p != nil {
		cpu, err := a.cpu(p, route, secs(run.KindCPU), n, focus)
		if err != nil {
			warn("cpu profile", err)
		}
		a.CPU = cpu
		routes, err := Routes(p, SampleCPU, min(n, 5), a.Classifier)
		if err != nil {
			warn("cpu profile by route", err)
		}
		a.Routes = routes
	}
	if p := ps[run.KindAllocs]; p != nil {
		if al, err := a.allocs(p, secs(run.KindAllocs), attr, n, focus); err != nil {
			warn("allocs profile", err)
		} else {
			a.Allocs = al
		}
	}
	for _, kind := range []string{run.KindBlock, run.KindMutex} {
		p := ps[kind]
		if p == nil {
			continue
		}
		t, err := Sites(p, SampleContentions, SampleDelay, attr, a.Classifier)
		if err != nil {
			warn(kind+" profile", err)
			continue
		}
		t = t.Top(ByAmount, n, focus)
		if kind == run.KindBlock {
			a.Block = t
		} else {
			a.Mutex = t
		}
	}
	if start, end := ps[run.KindGoroutineStart], ps[run.KindGoroutineEnd]; start != nil && end != nil {
		if route != nil {
			start, end = FilterSamples(start, route.Match), FilterSamples(end, route.Match)
		}
		g, err := GoroutineGrowth(start, end, n, a.Classifier)
		if err != nil {
			warn("goroutine profiles", err)
		} else {
			a.Goroutines = g
		}
	}
	a.PerRequest = a.perRequest(secs)
	return errs
}

func (a *Analysis) cpu(p *profile.Profile, route *RouteMatcher, seconds float64, n int, focus bool) (*CPU, error) {
	vi, err := SampleIndex(p, SampleCPU)
	if err != nil {
		return nil, err
	}
	cpu := &CPU{SampleType: SampleCPU, Unit: unitOf(p, vi), ProfileTotal: SampleTotal(p, vi), Seconds: seconds}
	if cpu.Unit == "nanoseconds" && seconds > 0 {
		cpu.Cores = float64(cpu.ProfileTotal) / 1e9 / seconds
	}
	var errs []error
	if gc, err := GC(p, SampleCPU); err != nil {
		errs = append(errs, err)
	} else {
		cpu.GC = gc
	}
	q := p
	if route != nil {
		if !HasLabel(p, RouteLabel) {
			errs = append(errs, fmt.Errorf("no sample carries an %s label, so --route %q selects nothing; "+
				"label requests with perfscope's expose middleware or pprof.Do", RouteLabel, a.Options.Route))
		}
		q = FilterSamples(p, route.Match)
		if len(q.Sample) == 0 && HasLabel(p, RouteLabel) {
			errs = append(errs, fmt.Errorf("no sample matches route %q (routes seen: %s)", a.Options.Route, strings.Join(routeNames(p), ", ")))
		}
	}
	ft, err := Functions(q, SampleCPU, a.Classifier)
	if err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	cpu.Total = ft.Total
	if sc, err := SystemCalls(q, SampleCPU, a.Classifier); err != nil {
		errs = append(errs, err)
	} else {
		cpu.Syscalls = sc
	}
	cpu.Flat = ft.Top(ByFlat, n, focus)
	cpu.Cum = ft.Top(ByCum, n, focus)
	attr := AttributeUser
	if !focus {
		attr = AttributeLeaf
	}
	if lines, err := Sites(q, SampleCPUCount, SampleCPU, attr, a.Classifier); err != nil {
		errs = append(errs, err)
	} else {
		cpu.Lines = lines.Top(ByAmount, n, focus)
	}
	return cpu, errors.Join(errs...)
}

func (a *Analysis) allocs(p *profile.Profile, seconds float64, attr Attribution, n int, focus bool) (*Allocs, error) {
	t, err := Sites(p, SampleAllocObjects, SampleAllocSpace, attr, a.Classifier)
	if err != nil {
		return nil, err
	}
	return &Allocs{
		Objects:   t.TotalCount,
		Bytes:     t.TotalAmount,
		Seconds:   seconds,
		ByObjects: t.Top(ByCount, n, focus),
		ByBytes:   t.Top(ByAmount, n, focus),
	}, nil
}

func (a *Analysis) perRequest(seconds func(kind string) float64) *PerRequest {
	if a.Run.Load == nil || a.Run.Load.Throughput <= 0 {
		return nil
	}
	pr := &PerRequest{Throughput: a.Run.Load.Throughput}
	per := func(v int64, kind string) *float64 {
		s := seconds(kind)
		if s <= 0 {
			return nil
		}
		x := float64(v) / (a.Run.Load.Throughput * s)
		return &x
	}
	if a.Allocs != nil {
		pr.AllocObjects = per(a.Allocs.Objects, run.KindAllocs)
		pr.AllocBytes = per(a.Allocs.Bytes, run.KindAllocs)
	}
	if a.CPU != nil && a.CPU.Unit == "nanoseconds" {
		if v := per(a.CPU.ProfileTotal, run.KindCPU); v != nil {
			*v /= 1e9
			pr.CPUSeconds = v
		}
	}
	if pr.AllocObjects == nil && pr.CPUSeconds == nil {
		return nil
	}
	return pr
}

// routeNames lists the distinct route labels of p, sorted.
func routeNames(p *profile.Profile) []string {
	seen := map[string]bool{}
	for _, s := range p.Sample {
		for _, r := range s.Label[RouteLabel] {
			seen[r] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
