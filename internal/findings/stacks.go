package findings

import (
	"iter"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/run"
)

// A frame is one function activation of a sample's stack; inlined calls
// are frames of their own, as in pprof.
type frame struct {
	fn    string
	file  string
	line  int64
	start int64 // the function's first line, 0 when unknown
	class profiles.Class
}

// A stack is one sample: its frames, innermost first, and its values.
type stack struct {
	frames []frame
	values []int64
}

// A prof is one profile of the run, its stacks decoded once for all rules.
type prof struct {
	kind   string
	p      *profile.Profile
	stacks []stack
}

// newProf decodes p's samples, classifying each function once.
func newProf(kind string, p *profile.Profile, c *profiles.Classifier) *prof {
	pr := &prof{kind: kind, p: p}
	classes := profiles.NewClasses(c, p)
	for _, s := range p.Sample {
		st := stack{values: s.Value}
		for _, f := range profiles.Frames(s) {
			fn := f.Function()
			if fn == nil {
				st.frames = append(st.frames, frame{class: profiles.Runtime})
				continue
			}
			st.frames = append(st.frames, frame{
				fn: fn.Name, file: fn.Filename, line: f.Line(),
				start: fn.StartLine, class: classes.Of(fn),
			})
		}
		if len(st.frames) > 0 {
			pr.stacks = append(pr.stacks, st)
		}
	}
	return pr
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// source says which profile and sample type a resource is measured in.
func (r Resource) source() (kind, sampleType, unit string) {
	switch r {
	case CPU:
		return run.KindCPU, profiles.SampleCPU, "nanoseconds"
	case AllocObjects:
		return run.KindAllocs, profiles.SampleAllocObjects, "count"
	case AllocBytes:
		return run.KindAllocs, profiles.SampleAllocSpace, "bytes"
	case BlockDelay:
		return run.KindBlock, profiles.SampleDelay, "nanoseconds"
	case MutexDelay:
		return run.KindMutex, profiles.SampleDelay, "nanoseconds"
	}
	return "", "", ""
}

// A siteKey names a source line of a function.
type siteKey struct {
	fn, file string
	line     int64
}

// A site accumulates one resource's value at one user line.
type site struct {
	siteKey
	start int64
	value int64
	// calls weighs the functions called at the line, toward the leaf.
	calls map[string]int64
	// matched weighs the functions that made the sample count (the
	// concatenation, the syscall), which may lie deeper than the call.
	matched map[string]int64
}

func (s *site) call() string    { return profiles.Heaviest(s.calls) }
func (s *site) matches() string { return profiles.Heaviest(s.matched) }

// sites maps lines to their sites.
type sites map[siteKey]*site

func (ss sites) add(f frame, v int64, call, matched string) {
	k := siteKey{f.fn, f.file, f.line}
	s := ss[k]
	if s == nil {
		s = &site{siteKey: k, start: f.start, calls: map[string]int64{}, matched: map[string]int64{}}
		ss[k] = s
	}
	s.value += v
	if call != "" {
		s.calls[call] += abs(v)
	}
	if matched != "" {
		s.matched[matched] += abs(v)
	}
}

// A matcher selects functions by name. Patterns ending in "*" are
// prefixes; others are exact names.
type matcher []string

func (m matcher) match(name string) bool { return profiles.MatchFunction(name, m) }

// callerQuery says which samples a rule charges to user lines.
type callerQuery struct {
	// match selects the frame that makes a sample count: the innermost
	// frame it accepts.
	match func(fn string) bool
	// between, when set, must accept every frame between the user frame
	// and the matched frame (exclusive): it keeps a rule to the user's own
	// calls, not those a library makes on the user's behalf.
	between func(f frame) bool
	// keep, when set, must accept the whole stack.
	keep func(fs []frame) bool
}

// callers charges each sample of r whose stack has a matching frame to the
// nearest user-code frame calling it. Samples with no user caller are
// left out.
func (e *env) callers(r Resource, q callerQuery) sites {
	out := sites{}
	for fs, v := range e.samples(r) {
		if q.keep != nil && !q.keep(fs) {
			continue
		}
		i := firstMatch(fs, q.match)
		if i < 0 {
			continue
		}
		j := profiles.UserFrame(fs, i, frameClass)
		if j < 0 || q.between != nil && !all(fs[i+1:j], q.between) {
			continue
		}
		out.add(fs[j], v, fs[j-1].fn, fs[i].fn)
	}
	return out
}

// runtimeCalls finds the user lines that call the runtime functions m
// accepts directly (through runtime frames only): their CPU samples in
// those functions, and the objects and bytes the lines allocate
// themselves. A line's allocations count when it has such CPU samples or,
// with compiler diagnostics, when the compiler says one that diag accepts
// escapes there: the compiler names the allocations that CPU sampling
// missed. Lines in skip are left out.
func (e *env) runtimeCalls(m matcher, diag func(escape.Diagnostic) bool, skip map[siteKey]bool) map[Resource]sites {
	runtimeOnly := func(f frame) bool { return f.class == profiles.Runtime }
	cpu := e.callers(CPU, callerQuery{match: m.match, between: runtimeOnly})
	objects, bytes := e.leafLines(AllocObjects), e.leafLines(AllocBytes)
	candidates := map[siteKey]bool{}
	for k := range cpu {
		candidates[k] = true
	}
	if e.ix != nil {
		for k := range objects {
			if len(e.reasons(k.file, k.line, diag)) > 0 {
				candidates[k] = true
			}
		}
	}
	for k := range skip {
		delete(candidates, k)
	}
	keep := func(ss sites) sites {
		out := sites{}
		for k, s := range ss {
			if candidates[k] {
				out[k] = s
			}
		}
		return out
	}
	return map[Resource]sites{CPU: keep(cpu), AllocObjects: keep(objects), AllocBytes: keep(bytes)}
}

// leafLines charges each sample of r whose innermost frame is user code to
// that line: what the line allocates itself (allocation profiles leave out
// the runtime's frames, so `s = a + s` allocates at the user's line).
func (e *env) leafLines(r Resource) sites {
	out := sites{}
	for fs, v := range e.samples(r) {
		if fs[0].class == profiles.User {
			out.add(fs[0], v, "", "")
		}
	}
	return out
}

// userLines charges each sample of r to its innermost user-code frame.
func (e *env) userLines(r Resource) sites {
	out := sites{}
	for fs, v := range e.samples(r) {
		if k := profiles.UserFrame(fs, -1, frameClass); k >= 0 {
			call := ""
			if k > 0 {
				call = fs[k-1].fn
			}
			out.add(fs[k], v, call, "")
		}
	}
	return out
}

// stackSum sums the samples of r whose stack keep accepts (all of them
// when keep is nil), as pprof sums a total: absolute values.
func (e *env) stackSum(r Resource, keep func(fs []frame) bool) int64 {
	var t int64
	for fs, v := range e.samples(r) {
		if keep == nil || keep(fs) {
			t += abs(v)
		}
	}
	return t
}

// samples yields the stacks of the profile measuring r whose value of r is
// not zero, with that value; none when the run lacks the profile.
func (e *env) samples(r Resource) iter.Seq2[[]frame, int64] {
	return func(yield func([]frame, int64) bool) {
		pr, vi := e.resource(r)
		if pr == nil {
			return
		}
		for _, s := range pr.stacks {
			if v := s.values[vi]; v != 0 && !yield(s.frames, v) {
				return
			}
		}
	}
}

// firstMatch is the index of the innermost frame m accepts, -1 if none.
func firstMatch(fs []frame, m func(string) bool) int {
	for i, f := range fs {
		if f.fn != "" && m(f.fn) {
			return i
		}
	}
	return -1
}

// frameClass is whose code f is, for profiles.UserFrame.
func frameClass(f frame) profiles.Class { return f.class }

// all reports whether ok accepts every frame of fs.
func all(fs []frame, ok func(frame) bool) bool {
	for _, f := range fs {
		if !ok(f) {
			return false
		}
	}
	return true
}

// anyFrame reports whether a frame of fs has a name m accepts.
func anyFrame(fs []frame, m func(string) bool) bool { return firstMatch(fs, m) >= 0 }

// inPackages accepts functions of the listed packages.
func inPackages(pkgs ...string) func(string) bool {
	return func(fn string) bool {
		p := profiles.PackagePath(fn)
		for _, q := range pkgs {
			if p == q {
				return true
			}
		}
		return false
	}
}

// cumCPU sums, per user function, the CPU samples it appears in (once per
// sample), with the function's file and first line; computed once.
func (e *env) cumCPU() map[string]*site {
	if e.cum != nil {
		return e.cum
	}
	e.cum = map[string]*site{}
	pr, vi := e.resource(CPU)
	if pr == nil {
		return e.cum
	}
	seen := map[string]bool{}
	for _, s := range pr.stacks {
		clear(seen)
		for _, f := range s.frames {
			if f.class != profiles.User || seen[f.fn] {
				continue
			}
			seen[f.fn] = true
			c := e.cum[f.fn]
			if c == nil {
				c = &site{siteKey: siteKey{fn: f.fn, file: f.file}, start: f.start}
				e.cum[f.fn] = c
			}
			c.value += s.values[vi]
		}
	}
	return e.cum
}
