package escape

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/fetch"
)

// ErrNoPackages marks a List whose packages could not be found: the
// caller has to name them.
var ErrNoPackages = errors.New("no packages to build")

// packagesError reads as the reason alone and is ErrNoPackages.
type packagesError struct{ err error }

func (e packagesError) Error() string        { return e.err.Error() }
func (e packagesError) Unwrap() error        { return e.err }
func (e packagesError) Is(target error) bool { return target == ErrNoPackages }

// ListOptions says what List builds and shows.
type ListOptions struct {
	Options
	// Dir is the source checkout to build; "." when empty.
	Dir string
	// Packages are the package patterns to build; without them, the
	// commands of the module in Dir (FindModule, Commands).
	Packages []string
	// Group selects the kinds shown; GroupEscape when empty.
	Group Group
	// ProfilePath, when set, names a pprof profile (.pb.gz): only lines
	// where it spent time or memory are shown, heaviest first.
	ProfilePath string
	// Top bounds the hot lines shown with a profile; 20 when zero.
	Top int
}

// A Listing is what the compiler said about a build, ready to show: every
// diagnostic of the chosen kinds, or with a profile only those on its
// hottest lines.
type Listing struct {
	// Root is the absolute directory that was built; files inside it
	// read best relative to it.
	Root  string
	Group Group
	// Warnings are the packages that could not be built, and other
	// problems that left the listing incomplete.
	Warnings []error
	// NothingBuilt is true when no package could be built at all.
	NothingBuilt bool

	// Diagnostics, without a profile, are ordered by position.
	Diagnostics []Diagnostic

	// Profiled is true when a profile chose the lines: then SampleType
	// and Unit name its value, Total is its value on every line of the
	// built code, and Hot holds the heaviest lines with diagnostics.
	Profiled         bool
	SampleType, Unit string
	Total            int64
	Hot              []HotLine

	// Source holds the text of every line shown, trimmed, by file and
	// line (Col zero); lines that could not be read are missing.
	Source map[Position]string
}

// List builds the packages as Build does and selects what to show. The
// profile is read first, so that a bad file fails before a build. Build
// problems are warnings in the listing, not errors; packages that cannot
// be found are an ErrNoPackages error.
func List(ctx context.Context, opts ListOptions) (*Listing, error) {
	if opts.Dir == "" {
		opts.Dir = "."
	}
	if opts.Group == "" {
		opts.Group = GroupEscape
	}
	if opts.Top <= 0 {
		opts.Top = 20
	}
	var prof *profile.Profile
	if opts.ProfilePath != "" {
		var err error
		if prof, err = readProfile(opts.ProfilePath); err != nil {
			return nil, err
		}
	}
	dir := opts.Dir
	var ix *Index
	var warns []error
	if len(opts.Packages) > 0 {
		ix, warns = Build(ctx, dir, opts.Packages, opts.Options)
	} else {
		m, err := FindModule(ctx, dir, opts.Options)
		if err != nil {
			return nil, packagesError{err}
		}
		mains, err := m.Commands(ctx)
		if err != nil {
			return nil, packagesError{err}
		}
		dir = m.Root
		ix, warns = m.Build(ctx, mains)
	}
	l := &Listing{Root: dir, Group: opts.Group, Warnings: warns, NothingBuilt: ix.Len() == 0 && len(warns) > 0}
	if abs, err := filepath.Abs(dir); err == nil {
		l.Root = abs
	}
	kinds := opts.Group.Kinds()
	if prof == nil {
		l.Diagnostics = ix.ByKind(kinds...)
	} else {
		l.Profiled = true
		l.SampleType, l.Unit = SampleUnit(prof)
		lines := ProfileLines(prof, ix.Compiled)
		for _, wl := range lines {
			l.Total += wl.Value
		}
		for _, h := range ix.Join(lines) {
			h.Diagnostics = slices.DeleteFunc(h.Diagnostics, func(d Diagnostic) bool {
				return len(kinds) > 0 && !slices.Contains(kinds, d.Kind)
			})
			if len(h.Diagnostics) > 0 && len(l.Hot) < opts.Top {
				l.Hot = append(l.Hot, h)
			}
		}
	}
	l.Source = l.sourceText()
	return l, nil
}

// sourceText reads the source of every line the listing shows.
func (l *Listing) sourceText() map[Position]string {
	var at []Position
	for _, d := range l.Diagnostics {
		at = append(at, Position{File: d.Pos.File, Line: d.Pos.Line})
	}
	for _, h := range l.Hot {
		at = append(at, Position{File: h.Source, Line: h.Line})
	}
	src := newSourceLines()
	text := map[Position]string{}
	for _, p := range at {
		if s := strings.TrimSpace(src.line(p)); s != "" {
			text[p] = s
		}
	}
	return text
}

// readProfile reads a pprof profile file.
func readProfile(path string) (*profile.Profile, error) {
	p, _, err := fetch.ParseFile(context.Background(), path, fetch.Limits{})
	if errors.Is(err, fetch.ErrTooLarge) || errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("read profile: not a pprof profile: %w", err)
	}
	return p, nil
}
