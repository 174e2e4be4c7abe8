package history

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/store"
)

// A Series is one benchmark metric's stored history on one branch and one
// machine with change detection: per commit the median with its confidence
// interval, and the commits where the metric changed. It is what 'perfscope
// history --format json' prints and the server's series API returns; its
// field names are stable.
type Series struct {
	Package string `json:"package"`
	Name    string `json:"name"`
	Unit    string `json:"unit"`
	// Branch and Machine are the series' line: its commits are those
	// with runs on this branch ("" for runs on no branch) and hostname,
	// and only their samples there, so a change is never measured
	// against another branch or machine.
	Branch  string `json:"branch"`
	Machine string `json:"machine"`
	// Noise is the typical relative change of the median between
	// adjacent commits (0.02 is 2%); Threshold the smallest change that
	// is marked. Both null when there are too few commits to know.
	Noise     *float64 `json:"noise"`
	Threshold *float64 `json:"threshold"`
	// Machines are the hostnames of the runs; more than one means
	// results of different machines are mixed, and a warning says so.
	Machines []string `json:"machines"`
	Warnings []string `json:"warnings,omitempty"`
	Commits  []Commit `json:"commits"`
}

// A Commit is one commit of a Series. Delta and P compare it with
// the previous commit (null for the first, and Delta when the previous
// median was 0); Better is 1 for an improvement, -1 for a regression, 0
// otherwise.
type Commit struct {
	Commit string `json:"commit"`
	Dirty  bool   `json:"dirty"`
	Ref    string `json:"ref"` // the commit as CommitSamples and compare take it
	Branch string `json:"branch"`
	// Subject is the first line of the commit's message and Author its
	// author's name, where the runs recorded them.
	Subject string    `json:"subject,omitempty"`
	Author  string    `json:"author,omitempty"`
	Time    time.Time `json:"time"`
	Runs    int       `json:"runs"`
	// Interrupted counts the runs among Runs that were stopped early
	// (Ctrl-C): their samples are those measured until then.
	Interrupted int      `json:"interrupted_runs,omitempty"`
	N           int      `json:"n"`
	Median      float64  `json:"median"`
	Lo          *float64 `json:"lo"` // null when too few samples for the interval
	Hi          *float64 `json:"hi"`
	Confidence  float64  `json:"confidence"`
	Delta       *float64 `json:"delta"`
	P           *float64 `json:"p"`
	Changed     bool     `json:"changed"`
	Better      int      `json:"better"`
	// Previous is the ref of the commit before, what a change is
	// compared with; "" for the first.
	Previous string `json:"previous,omitempty"`
}

// NewSeries runs change detection over one metric's points on line, as
// store.Store's Series returns them for the line's branch and machine.
func NewSeries(key store.SeriesKey, line Line, points []store.SeriesPoint, opts Options) Series {
	hp := make([]Point, 0, len(points))
	// DetectChanges keeps the points that have samples, in order: kept[i]
	// is the point of its i-th commit.
	kept := make([]*store.SeriesPoint, 0, len(points))
	h := Series{Package: key.Package, Name: key.Name, Unit: key.Unit, Branch: line.Branch, Machine: line.Machine}
	for i := range points {
		p := &points[i]
		if len(p.Values) > 0 {
			hp = append(hp, Point{Commit: p.Ref(), Time: p.Time, Values: p.Values})
			kept = append(kept, p)
		}
		for _, m := range p.Machines {
			if !slices.Contains(h.Machines, m) {
				h.Machines = append(h.Machines, m)
			}
		}
	}
	d := DetectChanges(key.Unit, hp, opts)
	h.Noise, h.Threshold = finiteOrNil(d.Noise), finiteOrNil(d.Threshold)
	if len(h.Machines) > 1 {
		h.Warnings = append(h.Warnings, fmt.Sprintf("results of %d machines (%s) are mixed: choose one machine", len(h.Machines), strings.Join(h.Machines, ", ")))
	}
	for _, w := range d.Warnings {
		h.Warnings = append(h.Warnings, w.Error())
	}
	h.Commits = make([]Commit, len(d.Commits))
	for i, c := range d.Commits {
		p := kept[i]
		hc := Commit{
			Commit: p.Hash, Dirty: p.Dirty, Ref: c.Commit, Branch: p.Branch, Subject: p.Subject, Author: p.Author, Time: c.Time, Runs: p.Runs, Interrupted: p.Interrupted, N: c.N,
			Median: c.Summary.Center, Lo: finiteOrNil(c.Summary.Lo), Hi: finiteOrNil(c.Summary.Hi),
			Confidence: c.Summary.Confidence, Changed: c.Changed, Better: c.Better,
		}
		if i > 0 {
			hc.Previous = d.Commits[i-1].Commit
		}
		if c.Compared {
			hc.Delta, hc.P = finiteOrNil(c.Delta), finiteOrNil(c.P)
		}
		h.Commits[i] = hc
	}
	return h
}

// finiteOrNil maps NaN and ±Inf, which JSON cannot carry, to null.
func finiteOrNil(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// ErrNoBenchmarks means the store holds no benchmark that the filter
// selects.
var ErrNoBenchmarks = errors.New("no recorded benchmarks match")
