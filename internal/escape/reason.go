package escape

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/perfscope/perfscope/internal/profiles"
)

// finish settles what needs more than one record: it drops duplicates
// (generic instantiations and inlined copies repeat records), drops the bare
// "escape" record the compiler logs next to each explained one, tells moved
// variables from escaping allocations, and writes every Reason. src, when not
// nil, reads source lines to name the function called at a position.
func finish(diags []Diagnostic, src *sourceLines) []Diagnostic {
	type key struct {
		code, msg string
		pos       Position
		inlined   string
	}
	keyOf := func(d Diagnostic) key {
		return key{d.Code, d.Message, d.Pos, fmt.Sprint(d.Inlined)}
	}
	type site struct {
		pos     Position
		inlined string
	}
	explained := map[site]bool{}
	bare := map[site]bool{}
	for _, d := range diags {
		if d.Kind != KindEscape {
			continue
		}
		s := site{d.Pos, fmt.Sprint(d.Inlined)}
		if d.Message != "" {
			explained[s] = true
		} else {
			bare[s] = true
		}
	}
	seen := map[key]bool{}
	out := diags[:0:0]
	for _, d := range diags {
		k := keyOf(d)
		if seen[k] {
			continue
		}
		seen[k] = true
		if d.Kind == KindEscape {
			s := site{d.Pos, fmt.Sprint(d.Inlined)}
			if d.Message == "" && explained[s] {
				continue
			}
			if isMoved(d, bare[s]) {
				d.Kind = KindMovedToHeap
			}
		}
		d.Reason = explain(d, src)
		out = append(out, d)
	}
	return out
}

// isMoved reports whether an escape record is about a named variable (the
// compiler's "moved to heap: x") rather than an allocation. The flow says so
// directly: a variable's own address flows ("← &x"), where an allocation's
// storage does ("← &{storage for ...}"). Without a flow, only allocations get
// the bare record next to the explained one.
func isMoved(d Diagnostic, hasBare bool) bool {
	subj, ok := strings.CutSuffix(d.Message, " escapes to heap")
	if !ok {
		return false
	}
	if len(d.Flow) > 0 {
		return d.Flow[0].Src == "&"+subj
	}
	return !hasBare && identRE.MatchString(subj)
}

var (
	identRE = regexp.MustCompile(`^[\pL_][\pL\pN_.]*$`)
	leakRE  = regexp.MustCompile(`^parameter (.+) leaks to (.+) with derefs=(-?\d+)$`)
)

// explain writes the plain-language Reason for d.
func explain(d Diagnostic, src *sourceLines) string {
	switch d.Kind {
	case KindEscape, KindMovedToHeap:
		subj, ok := strings.CutSuffix(d.Message, " escapes to heap")
		if !ok || subj == "" {
			return "a value allocated here escapes to heap"
		}
		head := "`" + subj + "` escapes to heap"
		if d.Kind == KindMovedToHeap {
			head = "`" + subj + "` is moved to heap"
		} else if isResult(subj) {
			head = "the result of the call escapes to heap"
			if name := src.calleeAt(d.Site()); name != "" {
				head = "the result of " + name + "(...) escapes to heap"
			}
		}
		return withWhy(head, flowWhy(d, subj, src))
	case KindLeak:
		m := leakRE.FindStringSubmatch(d.Message)
		if m == nil {
			return withWhy("parameter leaks", d.Message)
		}
		param, dst, derefs := m[1], m[2], m[3]
		who := "parameter `" + param + "`"
		if derefs != "0" {
			who = "what parameter `" + param + "` points to"
		}
		var head string
		switch {
		case dst == "{heap}":
			head = who + " leaks to heap"
		case isResult(dst):
			head = who + " leaks to result " + dst
		default:
			head = who + " leaks to " + dst
		}
		return withWhy(head, flowWhy(d, param, src))
	case KindCanInline:
		if cost, ok := strings.CutPrefix(d.Message, "cost: "); ok {
			return "can be inlined (cost " + cost + ")"
		}
		return withWhy("can be inlined", d.Message)
	case KindCannotInline:
		return withWhy("cannot be inlined", d.Message)
	case KindCannotInlineCall:
		return withWhy("call not inlined", d.Message)
	case KindBounds:
		if d.Code == "isSliceInBounds" {
			return "bounds check on a slice expression"
		}
		return "bounds check on an index expression"
	case KindNilCheck:
		return "nil check"
	case KindCopy:
		return withWhy("large copy", d.Message)
	case KindLoopVar:
		switch d.Code {
		case "iteration-variable-to-heap":
			return "loop variable `" + d.Message + "` is heap-allocated on every iteration"
		case "iteration-variable-to-stack":
			return "loop variable `" + d.Message + "` stays on the stack"
		}
		return withWhy(strings.ReplaceAll(d.Code, "-", " "), d.Message)
	}
	return withWhy(d.Code, d.Message)
}

func withWhy(head, why string) string {
	if why == "" {
		return head
	}
	return head + ": " + why
}

// isResult reports whether name is the compiler's name for a result
// parameter ("~r0"), which users never wrote.
func isResult(name string) bool { return strings.HasPrefix(name, "~r") }

// isAllocation reports whether expr is itself an allocating expression, as
// opposed to a value that gets boxed when converted to an interface.
func isAllocation(expr string) bool {
	for _, p := range []string{"&", "make(", "new(", "[]", "map[", "func literal", "append(", "([]", "(map[", "(*", "string(", "[]byte(", "[]rune("} {
		if strings.HasPrefix(expr, p) {
			return true
		}
	}
	return strings.Contains(expr, " + ") || strings.Contains(expr, "{")
}

// A clause is one hop of a reason; callee names the call it is about, so
// the next hop can say "which retains it" instead of naming it again.
type clause struct {
	text   string
	callee string
}

// flowWhy turns the escape flow into clauses like "passed as interface
// argument to fmt.Sprintf, which retains it". Hops that only rename a value
// (binding an inlined function's parameters, temporaries) are left out.
func flowWhy(d Diagnostic, subj string, src *sourceLines) string {
	var cs []clause
	for i, st := range d.Flow {
		c := stepClause(d, i, st, subj, src)
		if c.text == "" {
			continue
		}
		if n := len(cs); n > 0 && (cs[n-1].text == c.text || (c.callee != "" && cs[n-1].callee == c.callee)) {
			if c.callee != "" && cs[n-1].callee == c.callee && !strings.HasSuffix(cs[n-1].text, "which retains it") && strings.HasSuffix(c.text, "which retains it") {
				cs[n-1].text += ", which retains it"
			}
			continue
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return ""
	}
	// A moved variable's own address is what flows: say so, unless the
	// clause already says how (captured, too large).
	if d.Flow[0].Src == "&"+subj {
		for _, verb := range []string{"passed ", "stored ", "returned "} {
			if strings.HasPrefix(cs[0].text, verb) {
				cs[0].text = "its address is " + cs[0].text
				break
			}
		}
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.text
	}
	return strings.Join(parts, ", then ")
}

// stepClause describes one flow step by where the value goes.
func stepClause(d Diagnostic, i int, st FlowStep, subj string, src *sourceLines) clause {
	dst := st.Dst
	switch {
	case dst == "{storage for ... argument}":
		call := variadicCall(d, i, st, src)
		name := call
		if name == "" {
			name = "a variadic call"
		}
		boxed := i == 0 && st.Src == "&{storage for "+subj+"}" && !isAllocation(subj)
		for _, n := range st.Via {
			boxed = boxed || n.Why == "interface-converted"
		}
		if boxed {
			return clause{"passed as interface argument to " + name, call}
		}
		return clause{"passed in the ... argument of " + name, call}
	case dst == "{heap}":
		return sinkClause(d, st, subj, src)
	case dst == "{temp}":
		return clause{}
	case isResult(dst):
		for _, n := range st.Via {
			if n.Why == "return" {
				return clause{text: "returned from the function"}
			}
		}
		// Binding an inlined call's result: the value only changes name.
		return clause{}
	case strings.HasPrefix(dst, "{storage for "):
		for _, n := range st.Via {
			switch n.Why {
			case "captured by a closure":
				return clause{text: "captured by a closure"}
			case "interface-converted":
				// The interface's box is explained by its own record.
				return clause{text: "converted to an interface value"}
			}
		}
		return clause{text: "stored in `" + strings.TrimSuffix(strings.TrimPrefix(dst, "{storage for "), "}") + "`"}
	}
	for _, n := range st.Via {
		switch n.Why {
		case "assign-pair":
			// Binding an inlined function's parameters.
			return clause{}
		case "captured by a closure":
			return clause{text: "captured by a closure"}
		}
	}
	return clause{text: "stored in `" + dst + "`"}
}

// sinkClause describes the hop that reaches the heap, from the last note
// that says why.
func sinkClause(d Diagnostic, st FlowStep, subj string, src *sourceLines) clause {
	for j := len(st.Via) - 1; j >= 0; j-- {
		n := st.Via[j]
		switch n.Why {
		case "call parameter", "call receiver":
			name := calleeName(n.Expr)
			if name == "" {
				name = src.calleeAt(site(n))
			}
			if name == "" {
				name = "a function"
			}
			where := ""
			if len(n.Inlined) > 0 {
				where = " (" + short(site(n)) + ")"
			}
			return clause{"passed to " + name + where + ", which retains it", name}
		case "assign":
			lhs, _, _ := strings.Cut(n.Expr, " = ")
			return clause{text: "stored in `" + strings.TrimSpace(lhs) + "`"}
		case "too large for stack":
			return clause{text: "too large for the stack"}
		case "non-constant size":
			return clause{text: "its size is not a compile-time constant"}
		case "captured by a closure", "reference":
			return clause{text: "captured by a closure"}
		case "interface-converted":
			return clause{text: "converted to an interface that escapes"}
		}
	}
	if subj == "func literal" && strings.HasPrefix(strings.TrimSpace(src.line(d.Site())), "go ") {
		return clause{text: "run as a goroutine, which may outlive the function"}
	}
	if n := len(st.Via); n > 0 {
		last := st.Via[n-1]
		return clause{text: "reaches the heap through `" + last.Expr + "` (" + last.Why + ")"}
	}
	return clause{text: "reaches the heap"}
}

// variadicCall names the call whose ... argument slice holds the value: from
// the call-parameter note at the same place when the call is not inlined,
// else from the source text at the call's parenthesis.
func variadicCall(d Diagnostic, i int, st FlowStep, src *sourceLines) string {
	var at *FlowNote
	for j := range st.Via {
		if st.Via[j].Expr == "... argument" {
			at = &st.Via[j]
		}
	}
	if at == nil {
		return ""
	}
	for _, later := range d.Flow[i:] {
		for _, n := range later.Via {
			if n.Why == "call parameter" && n.Pos == at.Pos && len(n.Inlined) == len(at.Inlined) {
				if name := calleeName(n.Expr); name != "" {
					return name
				}
			}
		}
	}
	return src.calleeAt(site(*at))
}

// calleeName returns "fmt.Sprintf" for "fmt.Sprintf(x, ... argument...)".
func calleeName(expr string) string {
	name, _, ok := strings.Cut(expr, "(")
	if !ok || !identRE.MatchString(name) {
		return ""
	}
	return name
}

// site is where a note's code was written: its innermost inlined position.
func site(n FlowNote) Position {
	if k := len(n.Inlined); k > 0 {
		return n.Inlined[k-1]
	}
	return n.Pos
}

// short formats a position as file base name and line, enough to find it.
func short(p Position) string {
	return fmt.Sprintf("%s:%d", filepath.Base(p.File), p.Line)
}

// sourceLines reads source files on demand to name the function called at a
// position; the compiler's log has positions but not every callee's name.
// A nil *sourceLines reads nothing.
type sourceLines struct {
	files *profiles.SourceFiles
}

func newSourceLines() *sourceLines {
	return &sourceLines{files: profiles.NewSourceFiles(profiles.SourceOptions{})}
}

func (s *sourceLines) line(p Position) string {
	if s == nil || p.File == "" {
		return ""
	}
	return s.files.Line(p.File, int64(p.Line))
}

// calleeAt returns the function name written just before the parenthesis
// at p ("fmt.Sprintf", "l.Debug3"), or "" when p is not a call's "(".
func (s *sourceLines) calleeAt(p Position) string {
	text := s.line(p)
	i := p.Col - 1
	if i <= 0 || i >= len(text) || text[i] != '(' {
		return ""
	}
	j := i
	for j > 0 && isNameByte(text[j-1]) {
		j--
	}
	name := text[j:i]
	if !identRE.MatchString(name) {
		return ""
	}
	return name
}

func isNameByte(c byte) bool {
	return c == '_' || c == '.' || c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
