package profiles

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/run"
)

// Defaults of SourceOptions.
const (
	// DefaultSourceTop is how many functions a source view lists.
	DefaultSourceTop = 5
	// DefaultSourceMaxLines is the longest function listed whole; a longer
	// one is shown as windows around its lines with samples.
	DefaultSourceMaxLines = 80
	// DefaultSourceContext is how many lines a window shows on each side
	// of a line with samples.
	DefaultSourceContext = 3
)

// SourceOptions configure SourceListings and Source. The zero value lists
// DefaultSourceTop functions from source files read where the profile
// says they were built.
type SourceOptions struct {
	// Top is how many user-code functions each view lists; 0 means
	// DefaultSourceTop.
	Top int
	// SourceDir is a checkout of the profiled program. A file the profile
	// names that does not exist as is (a binary built on another machine,
	// in a container, or with -trimpath) is looked for under SourceDir by
	// its trailing path elements, longest first.
	SourceDir string
	// Confined reads only files inside SourceDir (symbolic links
	// resolved), never one at a path the profile names elsewhere: a
	// profile from outside could name any file. Without SourceDir it
	// reads none.
	Confined bool
	// Resolve, when set, replaces that lookup: it returns the local file
	// for a build path.
	Resolve func(buildPath string) (string, bool)
	// MaxLines is the longest function listed whole; 0 means
	// DefaultSourceMaxLines.
	MaxLines int
	// Context is the lines shown around each line with samples when a
	// function is too long to list whole; 0 means DefaultSourceContext.
	Context int
}

func (o SourceOptions) withDefaults() SourceOptions {
	if o.Top <= 0 {
		o.Top = DefaultSourceTop
	}
	if o.MaxLines <= 0 {
		o.MaxLines = DefaultSourceMaxLines
	}
	if o.Context <= 0 {
		o.Context = DefaultSourceContext
	}
	return o
}

// A SourceView is the `go tool pprof -list` view of one sample type: the
// hottest user-code functions, each with its source lines and their values.
type SourceView struct {
	// Kind is the profile kind (run.Kind*) the view comes from.
	Kind       string `json:"kind"`
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	// Total is the profile's total; shares are fractions of it.
	Total     int64            `json:"total"`
	Functions []FunctionSource `json:"functions"`
}

// A FunctionSource is one function's listing.
type FunctionSource struct {
	Function string `json:"function"`
	// File is the file as the profile records it.
	File string `json:"file"`
	// Source is the local file the text was read from; empty when the
	// listing comes from the profile's line numbers alone.
	Source    string `json:"source,omitempty"`
	StartLine int64  `json:"start_line,omitempty"`
	EndLine   int64  `json:"end_line,omitempty"`
	// Flat, Cum and Self sum the function's lines, each sample counted
	// once; see SourceLine.
	Flat      int64   `json:"flat"`
	FlatShare float64 `json:"flat_share"`
	Cum       int64   `json:"cum"`
	CumShare  float64 `json:"cum_share"`
	Self      int64   `json:"self"`
	SelfShare float64 `json:"self_share"`
	// Note says why the source text is missing or was not trusted.
	Note  string       `json:"note,omitempty"`
	Lines []SourceLine `json:"lines"`
}

// A SourceLine is one line of a listing.
//
// Flat and Cum are pprof's: Flat counts the samples whose innermost frame
// is this line, Cum those in which the line appears anywhere. Self counts
// the samples whose innermost user-code frame is this line: the line's own
// code plus the runtime and library work it calls, such as the allocation
// inside runtime.concatstrings for `s = a + s`. In an allocation profile
// a user line's Flat is usually 0, since the allocating frame is the
// runtime's; Self is the number to read there.
type SourceLine struct {
	Line int64 `json:"line"`
	// Text is the source text; empty when there is no source.
	Text      string  `json:"text,omitempty"`
	Flat      int64   `json:"flat"`
	FlatShare float64 `json:"flat_share"`
	Cum       int64   `json:"cum"`
	CumShare  float64 `json:"cum_share"`
	Self      int64   `json:"self"`
	SelfShare float64 `json:"self_share"`
	// Gap is set on the first line after lines left out.
	Gap bool `json:"gap,omitempty"`
}

// SourceListings computes the source views of an analysis: CPU time,
// allocated objects and allocated bytes, and the block and mutex delays,
// for whichever of those profiles the run has. A view with no user code
// is left out. Problems reading or trusting source files come back as
// warnings; the listing then shows the profile's line numbers alone.
func SourceListings(a *Analysis, opts SourceOptions) ([]*SourceView, []error) {
	type want struct{ kind, sampleType string }
	var views []*SourceView
	var errs []error
	for _, w := range []want{
		{run.KindCPU, SampleCPU},
		{run.KindAllocs, SampleAllocObjects},
		{run.KindAllocs, SampleAllocSpace},
		{run.KindBlock, SampleDelay},
		{run.KindMutex, SampleDelay},
	} {
		p := a.Profiles[w.kind]
		if p == nil {
			continue
		}
		v, warns := Source(p, w.sampleType, a.Classifier, opts)
		for _, err := range warns {
			errs = append(errs, fmt.Errorf("%s source view: %w", w.kind, err))
		}
		if v == nil || len(v.Functions) == 0 {
			continue
		}
		v.Kind = w.kind
		views = append(views, v)
	}
	return views, dedupErrors(errs)
}

// Source lists the user-code functions of p with the most Self value of
// sampleType ("" for the profile's default), line by line. c may be nil.
func Source(p *profile.Profile, sampleType string, c *Classifier, opts SourceOptions) (*SourceView, []error) {
	vi, err := SampleIndex(p, sampleType)
	if err != nil {
		return nil, []error{err}
	}
	opts = opts.withDefaults()
	cs := NewClasses(c, p)
	v := &SourceView{SampleType: p.SampleType[vi].Type, Unit: unitOf(p, vi), Total: SampleTotal(p, vi)}

	type lineKey struct {
		fn   *profile.Function
		line int64
	}
	type fnAcc struct {
		fn              *profile.Function
		flat, cum, self int64
		lines           map[int64]*SourceLine
	}
	fns := map[*profile.Function]*fnAcc{}
	acc := func(fn *profile.Function) *fnAcc {
		a := fns[fn]
		if a == nil {
			a = &fnAcc{fn: fn, lines: map[int64]*SourceLine{}}
			fns[fn] = a
		}
		return a
	}
	seenLine := map[lineKey]bool{}
	seenFn := map[*profile.Function]bool{}
	for _, s := range p.Sample {
		val := s.Value[vi]
		if val == 0 {
			continue
		}
		fs := Frames(s)
		if len(fs) == 0 {
			continue
		}
		self := UserFrame(fs, -1, cs.Frame)
		clear(seenLine)
		clear(seenFn)
		for i, f := range fs {
			if f.fn == nil || cs.Of(f.fn) != User {
				continue
			}
			a := acc(f.fn)
			ln := a.lines[f.line]
			if ln == nil {
				ln = &SourceLine{Line: f.line}
				a.lines[f.line] = ln
			}
			if i == 0 {
				ln.Flat += val
				a.flat += val
			}
			if i == self {
				ln.Self += val
				a.self += val
			}
			if k := (lineKey{f.fn, f.line}); !seenLine[k] {
				seenLine[k] = true
				ln.Cum += val
			}
			if !seenFn[f.fn] {
				seenFn[f.fn] = true
				a.cum += val
			}
		}
	}

	ranked := make([]*fnAcc, 0, len(fns))
	for _, a := range fns {
		if a.self != 0 || a.flat != 0 {
			ranked = append(ranked, a)
		}
	}
	slices.SortFunc(ranked, func(x, y *fnAcc) int {
		return cmp.Or(cmp.Compare(abs(y.self), abs(x.self)), cmp.Compare(abs(y.cum), abs(x.cum)),
			cmp.Compare(x.fn.Name, y.fn.Name))
	})
	ranked, _ = limit(ranked, opts.Top)

	files := NewSourceFiles(opts)
	var errs []error
	for _, a := range ranked {
		fsrc := FunctionSource{
			Function: a.fn.Name, File: a.fn.Filename, StartLine: a.fn.StartLine,
			Flat: a.flat, Cum: a.cum, Self: a.self,
			FlatShare: Share(a.flat, v.Total), CumShare: Share(a.cum, v.Total), SelfShare: Share(a.self, v.Total),
		}
		sampled := make([]SourceLine, 0, len(a.lines))
		for _, ln := range a.lines {
			ln.FlatShare, ln.CumShare, ln.SelfShare = Share(ln.Flat, v.Total), Share(ln.Cum, v.Total), Share(ln.Self, v.Total)
			sampled = append(sampled, *ln)
		}
		slices.SortFunc(sampled, func(x, y SourceLine) int { return cmp.Compare(x.Line, y.Line) })
		if err := fill(files.File(fsrc.File), &fsrc, sampled, opts); err != nil {
			errs = append(errs, err)
		}
		v.Functions = append(v.Functions, fsrc)
	}
	return v, errs
}

// fill sets fs.Lines (and Source, EndLine, Note) from the local source when
// it can be found and matches the profile, else from sampled alone. It
// returns a warning when a file was found but could not be used.
func fill(f *SourceFile, fs *FunctionSource, sampled []SourceLine, opts SourceOptions) error {
	fs.Lines = markGaps(sampled)
	switch {
	case f.Path == "":
		fs.Note = "source not found: pass the checkout with --source-dir"
		return nil
	case f.Parse() != nil:
		fs.Note = "source unreadable: " + f.Err.Error()
		return f.Err
	}
	start, end, err := f.FunctionSpan(fs.Function, fs.StartLine)
	if err != nil && implicitInit(fs.Function) {
		fs.Note = "the package's initialization of its variables, which the compiler writes: no function of the source holds it"
		return nil
	}
	if err == nil && len(sampled) > 0 && (sampled[0].Line < start || sampled[len(sampled)-1].Line > end) {
		err = fmt.Errorf("%s has samples at lines %d-%d, outside its source at %s:%d-%d",
			fs.Function, sampled[0].Line, sampled[len(sampled)-1].Line, f.Path, start, end)
	}
	if err != nil {
		fs.Note = "source does not match the profiled program (" + err.Error() + "); showing the profile's lines alone"
		return fmt.Errorf("source %s does not match the profiled program: %w", f.Path, err)
	}
	fs.Source, fs.StartLine, fs.EndLine = f.Path, start, end
	fs.Lines = listing(f.Lines, sampled, start, end, opts)
	return nil
}

// implicitInit reports whether function is a package's initialization
// of its variables ("example.com/p.init"), which the compiler writes and
// no source declares (a func init of the source is "p.init.0").
func implicitInit(function string) bool {
	pkg, name, ok := strings.Cut(function[strings.LastIndexByte(function, '/')+1:], ".")
	return ok && pkg != "" && name == "init"
}

// listing is the function's lines from start to end with the sampled
// values, whole when short, else windows around the sampled lines.
func listing(text []string, sampled []SourceLine, start, end int64, opts SourceOptions) []SourceLine {
	byLine := map[int64]SourceLine{}
	for _, ln := range sampled {
		byLine[ln.Line] = ln
	}
	show := func(n int64) bool { return true }
	if end-start+1 > int64(opts.MaxLines) {
		show = func(n int64) bool {
			for _, ln := range sampled {
				if n >= ln.Line-int64(opts.Context) && n <= ln.Line+int64(opts.Context) {
					return true
				}
			}
			return n == start
		}
	}
	var out []SourceLine
	prev := start - 1
	for n := start; n <= end && n <= int64(len(text)); n++ {
		if !show(n) {
			continue
		}
		ln, ok := byLine[n]
		if !ok {
			ln = SourceLine{Line: n}
		}
		ln.Text = text[n-1]
		ln.Gap = n != prev+1
		out = append(out, ln)
		prev = n
	}
	return out
}

// markGaps flags the sampled lines that do not follow the previous one,
// for a listing without source.
func markGaps(lines []SourceLine) []SourceLine {
	for i := range lines {
		lines[i].Gap = i > 0 && lines[i].Line != lines[i-1].Line+1
	}
	return lines
}

// dedupErrors drops repeated warnings: one mismatched file would otherwise
// be reported once per view.
func dedupErrors(errs []error) []error {
	seen := map[string]bool{}
	var out []error
	for _, err := range errs {
		msg := err.Error()
		if i := strings.Index(msg, "source view: "); i >= 0 {
			msg = msg[i:]
		}
		if !seen[msg] {
			seen[msg] = true
			out = append(out, err)
		}
	}
	return out
}
