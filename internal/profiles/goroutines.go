package profiles

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// Goroutines compares two goroutine profiles of one process, taken at the
// start and at the end of a load.
type Goroutines struct {
	Start int64 `json:"start"` // goroutines at the start
	End   int64 `json:"end"`   // goroutines at the end
	// Grew lists the stacks with more goroutines at the end than at the
	// start, most growth first: where goroutines pile up or leak.
	Grew []StackGrowth `json:"grew"`
	// Omitted counts growing stacks left out by the row limit.
	Omitted int `json:"omitted,omitempty"`
}

// A StackGrowth is one goroutine stack whose count changed.
type StackGrowth struct {
	// Function, File and Line name where the goroutines wait: the
	// innermost user frame, as for Site.
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
	Line     int64  `json:"line,omitempty"`
	Class    Class  `json:"class"`
	// Wait is the call the goroutines are parked in, made from that line
	// (runtime.chanrecv1, sync.(*WaitGroup).Wait, time.Sleep, ...).
	Wait  string `json:"wait,omitempty"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Delta int64  `json:"delta"`
	// Stack is the whole stack, innermost first, as "function file:line".
	Stack []string `json:"stack"`
}

// GoroutineGrowth subtracts start from end (see Subtract) and ranks the
// stacks that grew, keeping at most n (0: all). Stacks are the same when
// they have the same functions at the same lines. c may be nil.
func GoroutineGrowth(start, end *profile.Profile, n int, c *Classifier) (*Goroutines, error) {
	if start == nil || end == nil {
		return nil, fmt.Errorf("need both the start and the end goroutine profile")
	}
	if c == nil {
		c = NewClassifier("", start, end)
	}
	vi, err := SampleIndex(end, "")
	if err != nil {
		return nil, fmt.Errorf("end goroutine profile: %w", err)
	}
	if _, err := SampleIndex(start, ""); err != nil {
		return nil, fmt.Errorf("start goroutine profile: %w", err)
	}
	diff, err := Subtract(end, start)
	if err != nil {
		return nil, fmt.Errorf("goroutine profiles: %w", err)
	}
	g := &Goroutines{}
	stacks := map[string]*StackGrowth{}
	cs := NewClasses(c, diff)
	for _, s := range diff.Sample {
		v := s.Value[vi]
		atStart := FromBase(s)
		if atStart {
			g.Start -= v
		} else {
			g.End += v
		}
		fs := Frames(s)
		if len(fs) == 0 {
			continue
		}
		desc := make([]string, len(fs))
		for i, f := range fs {
			desc[i] = fmt.Sprintf("%s %s:%d", f.Name(), f.File(), f.line)
		}
		k := strings.Join(desc, "\n")
		sg := stacks[k]
		if sg == nil {
			at := attribute(fs, cs)
			f := fs[at]
			sg = &StackGrowth{Function: f.Name(), File: f.File(), Line: f.line, Class: cs.Of(f.fn), Stack: desc}
			sg.Wait = calleeOf(fs, at)
			stacks[k] = sg
		}
		if atStart {
			sg.Start -= v
		} else {
			sg.End += v
		}
	}
	for _, sg := range stacks {
		sg.Delta = sg.End - sg.Start
		if sg.Delta > 0 {
			g.Grew = append(g.Grew, *sg)
		}
	}
	slices.SortFunc(g.Grew, func(a, b StackGrowth) int {
		if c := cmp.Compare(b.Delta, a.Delta); c != 0 {
			return c
		}
		if c := cmp.Compare(b.End, a.End); c != 0 {
			return c
		}
		return cmp.Compare(strings.Join(a.Stack, "\n"), strings.Join(b.Stack, "\n"))
	})
	g.Grew, g.Omitted = limit(g.Grew, n)
	return g, nil
}

// Where is the location as "file:line".
func (s StackGrowth) Where() string {
	return Site{File: s.File, Line: s.Line}.Where()
}
