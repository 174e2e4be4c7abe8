package escape

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
)

// An Index holds diagnostics by file and line. Lookups accept file paths as
// profiles record them, which may come from another machine or a -trimpath
// build: a path that is not indexed as is matches the indexed file sharing
// the longest path suffix with it.
//
// An Index is immutable once built and safe for concurrent use.
type Index struct {
	all    []Diagnostic
	byLine map[string]map[int][]int // file → line → indexes into all, reported position
	inner  map[string]map[int][]int // file → line → indexes, innermost inlined position
	byBase map[string][]string      // base name → indexed files, for suffix matching
}

// NewIndex indexes diagnostics. Each diagnostic is found at its reported
// position and, for code inlined from elsewhere, also where the code was
// written, because a profile attributes inlined code to the latter.
func NewIndex(diags []Diagnostic) *Index {
	ix := &Index{
		all:    slices.Clone(diags),
		byLine: map[string]map[int][]int{},
		inner:  map[string]map[int][]int{},
		byBase: map[string][]string{},
	}
	slices.SortStableFunc(ix.all, compareDiagnostics)
	add := func(m map[string]map[int][]int, p Position, i int) {
		lines := m[p.File]
		if lines == nil {
			lines = map[int][]int{}
			m[p.File] = lines
		}
		lines[p.Line] = append(lines[p.Line], i)
	}
	files := map[string]bool{}
	for i, d := range ix.all {
		add(ix.byLine, d.Pos, i)
		files[d.Pos.File] = true
		if len(d.Inlined) > 0 {
			s := d.Site()
			add(ix.inner, s, i)
			files[s.File] = true
		}
	}
	for f := range files {
		b := filepath.Base(f)
		ix.byBase[b] = append(ix.byBase[b], f)
	}
	return ix
}

func compareDiagnostics(a, b Diagnostic) int {
	return cmp.Or(
		strings.Compare(a.Pos.File, b.Pos.File),
		cmp.Compare(a.Pos.Line, b.Pos.Line),
		cmp.Compare(a.Pos.Col, b.Pos.Col),
		cmp.Compare(len(a.Inlined), len(b.Inlined)),
		strings.Compare(string(a.Kind), string(b.Kind)),
		strings.Compare(a.Message, b.Message),
	)
}

// Len returns the number of diagnostics.
func (ix *Index) Len() int { return len(ix.all) }

// All returns every diagnostic, ordered by file, line and column.
func (ix *Index) All() []Diagnostic { return slices.Clone(ix.all) }

// Files returns the indexed files, sorted.
func (ix *Index) Files() []string {
	var fs []string
	for _, list := range ix.byBase {
		fs = append(fs, list...)
	}
	slices.Sort(fs)
	return fs
}

// ByKind returns the diagnostics of the given kinds (every diagnostic when
// none is given), ordered by position.
func (ix *Index) ByKind(kinds ...Kind) []Diagnostic {
	var out []Diagnostic
	for _, d := range ix.all {
		if len(kinds) == 0 || slices.Contains(kinds, d.Kind) {
			out = append(out, d)
		}
	}
	return out
}

// Compiled reports whether file (see Resolve) is a source file of the
// compiled packages, where the compiler reported diagnostics, rather than a
// file known only as the origin of code inlined into them (a standard
// library function, say). Profile lines in such files belong to the user.
func (ix *Index) Compiled(file string) bool {
	f, ok := ix.Resolve(file)
	return ok && ix.byLine[f] != nil
}

// Resolve returns the indexed file that file refers to: file itself when
// indexed, else the indexed file with the same base name sharing the most
// trailing path elements with it. Ties are ambiguous and resolve to nothing:
// showing one main.go's diagnostics for another's line would be wrong.
func (ix *Index) Resolve(file string) (string, bool) {
	if file == "" {
		return "", false
	}
	file = filepath.ToSlash(file)
	cands := ix.byBase[pathBase(file)]
	best, bestN, tie := "", 0, false
	for _, c := range cands {
		if c == file {
			return c, true
		}
		n := commonSuffix(c, file)
		switch {
		case n > bestN:
			best, bestN, tie = c, n, false
		case n == bestN:
			tie = true
		}
	}
	if bestN == 0 || tie {
		return "", false
	}
	return best, true
}

// pathBase is filepath.Base for slash-separated paths on any platform,
// since profiles from other machines carry foreign separators.
func pathBase(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// commonSuffix counts the trailing path elements a and b share.
func commonSuffix(a, b string) int {
	as := strings.FieldsFunc(a, isSep)
	bs := strings.FieldsFunc(b, isSep)
	n := 0
	for n < len(as) && n < len(bs) && as[len(as)-1-n] == bs[len(bs)-1-n] {
		n++
	}
	return n
}

func isSep(r rune) bool { return r == '/' || r == '\\' }

// At returns the diagnostics for a source line: first those the compiler
// reports at that line, then those about code written at that line but
// inlined elsewhere (their Pos is the call site they were inlined into).
// file may be a path from a profile; see Resolve.
func (ix *Index) At(file string, line int) []Diagnostic {
	f, ok := ix.Resolve(file)
	if !ok {
		return nil
	}
	var out []Diagnostic
	for _, i := range ix.byLine[f][line] {
		out = append(out, ix.all[i])
	}
	for _, i := range ix.inner[f][line] {
		out = append(out, ix.all[i])
	}
	return out
}

// A WeightedLine is a source line with a weight, such as the CPU time or
// bytes a profile attributes to it.
type WeightedLine struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Value int64  `json:"value"`
}

// A HotLine is a weighted line joined with the compiler's diagnostics there.
type HotLine struct {
	WeightedLine
	// Source is the indexed file the line resolved to; empty when the file
	// is not in the index.
	Source      string       `json:"source,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// Join attaches diagnostics to weighted lines. Lines naming the same source
// line are merged and their values summed; the result is ordered by value,
// heaviest first, and includes lines without diagnostics so a caller can
// tell "hot but nothing to say" from "not hot".
func (ix *Index) Join(lines []WeightedLine) []HotLine {
	type key struct {
		file string
		line int
	}
	merged := map[key]*HotLine{}
	var order []key
	for _, l := range lines {
		src, ok := ix.Resolve(l.File)
		k := key{l.File, l.Line}
		if ok {
			k.file = src
		}
		h := merged[k]
		if h == nil {
			h = &HotLine{WeightedLine: WeightedLine{File: l.File, Line: l.Line}, Source: src}
			merged[k] = h
			order = append(order, k)
		}
		h.Value += l.Value
	}
	out := make([]HotLine, 0, len(order))
	for _, k := range order {
		h := merged[k]
		if h.Source != "" {
			h.Diagnostics = ix.At(h.Source, h.Line)
		}
		out = append(out, *h)
	}
	slices.SortStableFunc(out, func(a, b HotLine) int {
		return cmp.Or(cmp.Compare(b.Value, a.Value), strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return out
}
