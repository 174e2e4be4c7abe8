package findings

import (
	"fmt"
	"strings"

	"github.com/perfscope/perfscope/internal/escape"
	"github.com/perfscope/perfscope/internal/profiles"
)

// checkFunction says whether f defines function (starting at start, when
// known) around line: whether it is the source the profile was taken of.
func checkFunction(f *profiles.SourceFile, function string, start, line int64) error {
	from, to, err := f.FunctionSpan(function, start)
	if err != nil {
		return err
	}
	if line != 0 && (line < from || line > to) {
		return fmt.Errorf("line %d is outside %s (lines %d-%d)", line, function, from, to)
	}
	return nil
}

// lineText is line n of f without its indentation, "" when f has no such
// line.
func lineText(f *profiles.SourceFile, n int64) string {
	return strings.TrimSpace(f.Line(n))
}

// checkSource adds each evidence line's source text, after checking that
// the source found is the program that was profiled: a function that is
// not where the profile says means another program or another version,
// whose lines and compiler reasons would mislead. Such evidence keeps the
// profile's numbers only, the finding says why, and a warning names the
// file once.
func (e *env) checkSource(fs []Finding) []error {
	var warns []error
	warned := map[string]bool{}
	for i := range fs {
		f := &fs[i]
		noted := map[string]bool{}
		note := func(n string) {
			if !noted[n] {
				noted[n] = true
				f.Notes = append(f.Notes, n)
			}
		}
		for j := range f.Evidence {
			ev := &f.Evidence[j]
			if ev.File == "" || ev.Function == "" {
				continue
			}
			sf := e.src.File(ev.File)
			if sf.Path == "" {
				continue
			}
			if sf.Err != nil {
				if !warned[sf.Path] {
					warned[sf.Path] = true
					warns = append(warns, fmt.Errorf("source %s: %w", sf.Path, sf.Err))
				}
				continue
			}
			// Without the function's first line (goroutine stacks), a
			// function literal cannot be told from another: no check.
			if ev.start == 0 {
				ev.Source = lineText(sf, ev.Line)
				continue
			}
			if err := checkFunction(sf, ev.Function, ev.start, ev.Line); err != nil {
				ev.Source, ev.Compiler = "", nil
				note(fmt.Sprintf("The source at %s does not match the profiled program (%v): it may be another program or version, so source lines and compiler reasons are left out.", sf.Path, err))
				if !warned[sf.Path] {
					warned[sf.Path] = true
					warns = append(warns, fmt.Errorf("source %s does not match the profiled program: %w; pass the checkout it was built from with --source-dir", sf.Path, err))
				}
				continue
			}
			if ev.Line != 0 {
				ev.Source = lineText(sf, ev.Line)
			}
		}
		if e.ix != nil && e.ruleUsesCompiler(f.Rule) {
			for _, ev := range f.Evidence {
				if ev.File == "" {
					continue
				}
				if _, ok := e.ix.Resolve(ev.File); !ok {
					note(fmt.Sprintf("The compiler diagnostics do not cover %s: build them from the profiled program's source (--source-dir).", ev.File))
				}
			}
		}
	}
	return warns
}

func (e *env) ruleUsesCompiler(id string) bool {
	r, ok := Lookup(id)
	return ok && r.compiler
}

// reasons returns the compiler's plain-language reasons for allocations
// at a line that keep accepts (all escape diagnostics when keep is nil).
func (e *env) reasons(file string, line int64, keep func(d escape.Diagnostic) bool) []string {
	if e.ix == nil || file == "" || line <= 0 {
		return nil
	}
	var out []string
	for _, d := range e.ix.At(file, int(line)) {
		if d.Kind.Group() != escape.GroupEscape || d.Kind == escape.KindLeak {
			continue
		}
		if keep != nil && !keep(d) {
			continue
		}
		if r := d.Reason; r != "" && !contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
