package web

import (
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/report"
)

// Leaks is the leaks page: the form (target selector and range, as typed),
// what is wrong with it if anything, and the leaks named with the series
// judged.
type Leaks struct {
	Target, Since string
	// Problem says why nothing is shown: bad input, or no snapshots in
	// the range.
	Problem string
	Method  string
	Range   string
	Leaks   []LeakRow
	Judged  []JudgedRow
	// Ran is true when a report was computed (Problem is empty).
	Ran bool
}

// A JudgedRow is one series judged, with why part of it was not.
type JudgedRow struct {
	profseries.LeakSeries
	Target string
	Note   string
}

// A LeakRow is one leak as the page shows it.
type LeakRow struct {
	Target, Type       string
	Sentence, Evidence string
	Wait               string
	Stack              []string
}

// NewLeaks lays out a leak report; rep nil shows the form and problem
// alone.
func NewLeaks(target, since, problem string, rep *profseries.LeakReport) *Leaks {
	l := &Leaks{Target: target, Since: since, Problem: problem}
	if rep == nil {
		return l
	}
	l.Ran = true
	l.Method = report.LeakMethod(rep)
	l.Range = seriesRange(rep.From, rep.To)
	for _, j := range rep.Judged {
		l.Judged = append(l.Judged, JudgedRow{LeakSeries: j, Target: j.Target.String(), Note: report.LeakSeriesNote(rep, j)})
	}
	for _, k := range rep.Leaks {
		row := LeakRow{Target: k.Target.String(), Type: k.Type, Sentence: report.LeakSentence(k), Evidence: report.LeakEvidence(k), Stack: k.Stack}
		if k.Wait != "" {
			row.Wait = k.Wait + " at " + report.ShortFrame(k.At)
		}
		l.Leaks = append(l.Leaks, row)
	}
	return l
}
