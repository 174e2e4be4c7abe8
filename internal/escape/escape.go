// Package escape explains where a Go program allocates and why: it builds the
// program's packages with the compiler's machine-readable optimization log
// (-gcflags=-json=0,DIR) and indexes every diagnostic by file and line, so a
// hot line from a profile can be shown next to the compiler's reasons. What
// a build said is kept in perfscope's cache under a digest of everything
// that decides it, so unchanged source is compiled once.
//
// The package is opinionated about trust: the compiler's own words are kept
// verbatim (Message, Flow), and every plain-language Reason is derived from
// them, never guessed from source text alone.
package escape

import (
	"fmt"
	"strings"
)

// A Kind classifies a compiler diagnostic in the words a performance
// engineer uses; Code keeps the compiler's exact name.
type Kind string

// The kinds of diagnostics the Go compiler logs (Go 1.26, cmd/compile/internal/logopt).
const (
	// KindEscape is an allocation (or a value boxed into an interface) that
	// the compiler placed on the heap: "x escapes to heap".
	KindEscape Kind = "escape"
	// KindMovedToHeap is a named local variable whose address outlives its
	// function, so it lives on the heap: "moved to heap: x".
	KindMovedToHeap Kind = "moved-to-heap"
	// KindLeak is a parameter whose value (or the memory it points to)
	// outlives the call: callers of the function must heap-allocate it.
	KindLeak Kind = "leak"
	// KindCanInline is a function the compiler may inline, with its cost.
	KindCanInline Kind = "can-inline"
	// KindCannotInline is a function the compiler never inlines, with why.
	KindCannotInline Kind = "cannot-inline"
	// KindCannotInlineCall is one call site that was not inlined, with why.
	KindCannotInlineCall Kind = "cannot-inline-call"
	// KindBounds is a bounds check the compiler could not prove away.
	KindBounds Kind = "bounds"
	// KindNilCheck is a nil check the compiler could not prove away.
	KindNilCheck Kind = "nilcheck"
	// KindCopy is a copy of 128 bytes or more.
	KindCopy Kind = "copy"
	// KindLoopVar is a Go 1.22 per-iteration loop variable decision.
	KindLoopVar Kind = "loopvar"
	// KindOther is any diagnostic code this package does not know yet.
	KindOther Kind = "other"
)

// A Group is a family of kinds, as selected by `perfscope escape --kind`.
type Group string

// The groups of kinds.
const (
	GroupEscape   Group = "escape"   // escape, moved-to-heap, leak
	GroupInline   Group = "inline"   // can-inline, cannot-inline, cannot-inline-call
	GroupBounds   Group = "bounds"   // bounds
	GroupNilCheck Group = "nilcheck" // nilcheck
	GroupOther    Group = "other"    // copy, loopvar, other
	GroupAll      Group = "all"      // every kind
)

// Groups lists the groups a user can select, in the order help text shows them.
func Groups() []Group {
	return []Group{GroupEscape, GroupInline, GroupBounds, GroupNilCheck, GroupOther, GroupAll}
}

// Group returns the family k belongs to.
func (k Kind) Group() Group {
	switch k {
	case KindEscape, KindMovedToHeap, KindLeak:
		return GroupEscape
	case KindCanInline, KindCannotInline, KindCannotInlineCall:
		return GroupInline
	case KindBounds:
		return GroupBounds
	case KindNilCheck:
		return GroupNilCheck
	}
	return GroupOther
}

// Kinds returns the kinds in group g; GroupAll and unknown groups return nil,
// which ByKind reads as "every kind".
func (g Group) Kinds() []Kind {
	var ks []Kind
	for _, k := range []Kind{KindEscape, KindMovedToHeap, KindLeak, KindCanInline, KindCannotInline,
		KindCannotInlineCall, KindBounds, KindNilCheck, KindCopy, KindLoopVar, KindOther} {
		if g != GroupAll && k.Group() == g {
			ks = append(ks, k)
		}
	}
	return ks
}

// kindOf maps a compiler diagnostic code to its Kind. Escape codes need the
// message and flow to tell an allocation from a moved variable, so the parser
// refines KindEscape afterwards.
func kindOf(code string) Kind {
	switch code {
	case "escape", "escapes":
		return KindEscape
	case "leak":
		return KindLeak
	case "canInlineFunction":
		return KindCanInline
	case "cannotInlineFunction":
		return KindCannotInline
	case "cannotInlineCall":
		return KindCannotInlineCall
	case "isInBounds", "isSliceInBounds":
		return KindBounds
	case "nilcheck":
		return KindNilCheck
	case "copy":
		return KindCopy
	}
	if strings.HasPrefix(code, "iteration-variable-") || strings.HasPrefix(code, "loop-modified-") {
		return KindLoopVar
	}
	return KindOther
}

// A Position is a place in a source file. Line and Col are 1-based; Col
// counts bytes, as the compiler does.
type Position struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col,omitempty"`
}

func (p Position) String() string {
	if p.Col > 0 {
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// A Diagnostic is one fact the compiler logged about one place in the code.
type Diagnostic struct {
	Kind Kind `json:"kind"`
	// Code is the compiler's own name, e.g. "isSliceInBounds" or "escapes".
	Code string `json:"code"`
	// Package is the import path of the package being compiled; "main" for
	// commands, because the compiler sees them that way.
	Package string `json:"package,omitempty"`
	// Pos is where the compiler reports the diagnostic, as `go build
	// -gcflags=-m` does: for code inlined from another function, the
	// outermost call site in the function being compiled.
	Pos Position `json:"pos"`
	// EndLine is the last line of a diagnostic that spans lines (loops).
	EndLine int `json:"end_line,omitempty"`
	// Inlined lists, for code that came from inlined calls, the positions
	// from the outermost inlined callee inward; the last is where the code
	// was written. Empty for code written where it is reported.
	Inlined []Position `json:"inlined,omitempty"`
	// Message is the compiler's message, verbatim ("v escapes to heap",
	// "cost: 13", "function too complex: cost 296 exceeds budget 80").
	Message string `json:"message,omitempty"`
	// Reason says in plain language what happened and why.
	Reason string `json:"reason"`
	// Flow is the compiler's escape-flow explanation (escape kinds only).
	Flow []FlowStep `json:"flow,omitempty"`
}

// Site returns where the code the diagnostic is about was written: the
// innermost inlined position, or Pos.
func (d Diagnostic) Site() Position {
	if n := len(d.Inlined); n > 0 {
		return d.Inlined[n-1]
	}
	return d.Pos
}

// A FlowStep is one hop of an escape explanation: the value Src flows to
// Dst ("{heap}", a variable, "~r0" for a result) through the expressions Via.
type FlowStep struct {
	Dst string `json:"dst"`
	// Src is the flowing value; a leading "&" means its address flows, a
	// leading "*" that what it points to flows.
	Src string     `json:"src"`
	Pos Position   `json:"pos"`
	Via []FlowNote `json:"via,omitempty"`
}

// A FlowNote is one expression a value flows through and the compiler's name
// for how ("call parameter", "assign", "interface-converted", ...).
type FlowNote struct {
	Expr    string     `json:"expr"`
	Why     string     `json:"why"`
	Pos     Position   `json:"pos"`
	Inlined []Position `json:"inlined,omitempty"`
}
