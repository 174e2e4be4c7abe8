package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/measure"
)

// WriteHistory renders per-commit series in format f: in text and
// Markdown a line saying which commits were judged and which filters
// applied, then one table per metric and line (branch and machine), a row
// per commit with the median, its confidence interval, the change from the
// commit before and a mark where the metric changed; with changedOnly, only
// the marked commits (and metrics that have one), or a line saying there
// are none. The JSON form is
// history.Result: {"series": [history.Series...], "window": N, "filters":
// [...]}, every commit included.
func WriteHistory(w io.Writer, f Format, res *history.Result, changedOnly bool) error {
	if f == JSON {
		out := *res
		out.Series = nonNil(out.Series)
		return writeJSON(w, out)
	}
	return renderDoc(w, f, historyDoc(res, changedOnly))
}

// historyDoc lays out one block per metric and line: its name, how noisy
// it is, a row per commit and its warnings as notes.
func historyDoc(res *history.Result, changedOnly bool) *doc {
	judged := "every commit of each series judged"
	if res.Window > 0 {
		judged = fmt.Sprintf("the latest %d commits of each series judged", res.Window)
	}
	if len(res.Filters) > 0 {
		judged += "; only " + strings.Join(res.Filters, ", ")
	}
	var blocks []block
	for _, s := range res.Series {
		if changedOnly && !slices.ContainsFunc(s.Commits, func(c history.Commit) bool { return c.Changed }) {
			continue
		}
		b := block{caption: fmt.Sprintf("%s %s  %s  (branch %s, machine %s)", s.Package, s.Name, s.Unit, orNone(s.Branch), s.Machine)}
		switch {
		case s.Noise != nil && *s.Noise == 0:
			b.lines = []string{"no noise between commits: every significant change is marked"}
		case s.Noise != nil:
			b.lines = []string{fmt.Sprintf("noise ±%.1f%% per commit; changes beyond %+.1f%% / %+.1f%% are marked",
				100**s.Noise, 100**s.Threshold, 100*(1/(1+*s.Threshold)-1))}
		}
		centers := make([]float64, len(s.Commits))
		for i, c := range s.Commits {
			centers[i] = c.Median
		}
		scale := measure.TableScale(s.Unit, centers)
		orUnknown := func(v *float64) string {
			if v == nil {
				return "?"
			}
			return scale.Format(*v)
		}
		tt := &table{header: []string{"commit", "date", "median", "95% CI", "n", "vs previous", "", "subject"}, code: []bool{true}}
		for _, c := range s.Commits {
			if changedOnly && !c.Changed {
				continue
			}
			ref := gitstate.Short(c.Commit)
			if c.Dirty {
				ref += gitstate.DirtySuffix
			}
			vs := ""
			switch {
			case c.P == nil && c.Delta == nil:
			case c.Delta == nil:
				vs = fmt.Sprintf("from 0  p=%.3f", *c.P)
			default:
				vs = fmt.Sprintf("%s  p=%.3f", measure.FormatChange(*c.Delta), *c.P)
			}
			cells := []string{ref, c.Time.Local().Format("2006-01-02 15:04"), scale.Format(c.Median),
				"[" + orUnknown(c.Lo) + ", " + orUnknown(c.Hi) + "]", strconv.Itoa(c.N), vs, historyMark(c), commitLine(c.Subject, c.Author)}
			if c.Changed && c.Better == -1 {
				tt.addStrong(cells, 6)
				continue
			}
			tt.add(cells...)
		}
		b.table = tt
		b.notes = s.Warnings
		blocks = append(blocks, b)
	}
	d := &doc{meta: []string{judged}}
	if changedOnly && len(blocks) == 0 {
		// Nothing marked: say so, not an empty output that reads as a
		// failure to run.
		d.meta = append(d.meta, fmt.Sprintf("no commit marked changed in %d metric%s; without --changed every commit shows, with why none is marked",
			len(res.Series), plural(len(res.Series))))
	}
	d.add(section{blocks: blocks})
	return d
}

// historyMark names a marked change in words, and says when runs of the
// commit were interrupted.
func historyMark(c history.Commit) string {
	var mark string
	if c.Changed {
		switch c.Better {
		case 1:
			mark = "<- improvement"
		case -1:
			mark = "<- REGRESSION"
		default:
			mark = "<- changed"
		}
	}
	if c.Interrupted > 0 {
		mark = strings.TrimSpace(mark + fmt.Sprintf(" (%d of %d runs interrupted)", c.Interrupted, c.Runs))
	}
	return mark
}

// commitLine names a commit in a table cell: its subject, shortened to
// fit a line, and its author in parentheses; "" when neither is known.
func commitLine(subject, author string) string {
	s := gitstate.OneLine(subject, 60)
	if author != "" {
		s = strings.TrimSpace(s + " (" + author + ")")
	}
	return s
}

// orNone is a branch name, or "none" for runs on no branch.
func orNone(branch string) string {
	if branch == "" {
		return "none"
	}
	return branch
}
