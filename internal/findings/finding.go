package findings

import "fmt"

// A Resource is what a finding's severity is a share of.
type Resource string

// Resources, also their JSON values.
const (
	CPU          Resource = "cpu"           // CPU time of the CPU profile
	AllocObjects Resource = "alloc_objects" // objects allocated during the window
	AllocBytes   Resource = "alloc_bytes"   // bytes allocated during the window
	BlockDelay   Resource = "block_delay"   // time goroutines spent blocked
	MutexDelay   Resource = "mutex_delay"   // time goroutines waited for contended locks
	Goroutines   Resource = "goroutines"    // goroutines alive at the end of the window
	// Idle is the share of the target's available CPU it left unused.
	Idle Resource = "idle"
)

// A Finding is one diagnosed problem. The rendering layer writes it, in
// JSON too, where its Texts become strings (see the package comment).
type Finding struct {
	// Rule is the id of the rule that found it; its explanation says more.
	Rule  string
	Title string
	// Severity is the share of Resource the problem accounts for, from 0
	// to 1: findings are ranked by it.
	Severity float64
	Resource Resource
	// Summary says what was found, with the numbers, in a sentence or two.
	Summary  Text
	Evidence []Evidence
	Fix      Fix
	// Notes are caveats: what could not be checked and why.
	Notes []string
}

// Evidence is one place in the code that a finding rests on.
type Evidence struct {
	Function string
	File     string
	Line     int64
	// Call is the costly call made at this line, as profiled:
	// runtime.concatstring2, fmt.Sprintf, os.(*File).Write, ...
	Call string
	// Source is the text of the line, when the source was found.
	Source string
	// Measures are the line's numbers, most telling first.
	Measures []Measure
	// Compiler holds the compiler's reasons for this line's allocations,
	// from the escape index, in plain language.
	Compiler []string
	// Stack is a goroutine stack, innermost first, for findings about
	// goroutines.
	Stack []string
	// Detail is anything else worth showing, such as a goroutine count
	// going from 4 to 412.
	Detail Text

	// start is the function's first line, to check the source against.
	start int64
}

// A Measure is one number of a piece of evidence.
type Measure struct {
	Resource Resource `json:"resource"`
	// Value is in Unit: nanoseconds, count, bytes or goroutines.
	Value int64  `json:"value"`
	Unit  string `json:"unit"`
	// Share is Value over the profile's total, from 0 to 1.
	Share float64 `json:"share"`
}

// A Fix is what usually solves the problem.
type Fix struct {
	Summary string `json:"summary"`
	// Example is a short before/after in Go.
	Example string `json:"example,omitempty"`
}

// Where is the evidence's location as "file:line".
func (e Evidence) Where() string {
	switch {
	case e.File == "":
		return ""
	case e.Line == 0:
		return e.File
	}
	return fmt.Sprintf("%s:%d", e.File, e.Line)
}

// Noun is how a sentence names the resource: "CPU", "allocated objects".
func (r Resource) Noun() string {
	switch r {
	case CPU:
		return "CPU"
	case AllocObjects:
		return "allocated objects"
	case AllocBytes:
		return "allocated bytes"
	case BlockDelay:
		return "blocked time"
	case MutexDelay:
		return "lock wait time"
	case Goroutines:
		return "goroutines"
	case Idle:
		return "available CPU unused"
	}
	return string(r)
}
