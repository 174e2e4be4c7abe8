package gate

import (
	"time"

	"github.com/perfscope/perfscope/internal/bench"
)

// A Report is a gate decision with the context a reader needs: what was
// compared, how, and how long it took. Its JSON field names are stable;
// report.WriteGate writes it.
type Report struct {
	Base string `json:"base"` // "main (1a2b3c4d5e6f)"
	Head string `json:"head"` // "working tree (…)"
	// Measure is what decided: "instructions" (instruction counts and
	// allocations, wall time reported) or "time".
	Measure   string        `json:"measure"`
	Rounds    int           `json:"rounds"`
	Benchtime string        `json:"benchtime"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	Decision  *Decision     `json:"decision"`
	// CountNotes are what limited or prevented instruction counts, such
	// as a benchmark counted by time only; the rendering layer writes them
	// first among the notes, in JSON too.
	CountNotes []bench.CountNote `json:"-"`
	// Notes are things the reader should know that are not failures,
	// such as packages that exist only in the head.
	Notes []string `json:"notes,omitempty"`
	// Explanations say where each exact measure that changed beyond its
	// threshold changed: by function and line for instructions/op, by
	// allocation site for allocs/op and B/op.
	Explanations []Explanation `json:"explanations,omitempty"`
}
