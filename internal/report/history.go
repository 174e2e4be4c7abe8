package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchunit"

	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/history"
)

// WriteHistory renders per-commit series in format f: in text and Markdown one table
// per metric, a line per commit with the median, its confidence interval,
// the change from the commit before and a mark where the metric changed;
// with changedOnly, only the marked commits (and metrics that have one).
// The JSON form is {"series": [history.Series...]}, every commit included.
func WriteHistory(w io.Writer, f Format, series []history.Series, changedOnly bool) error {
	if f == JSON {
		return writeJSON(w, struct {
			Series []history.Series `json:"series"`
		}{nonNil(series)})
	}
	return renderDoc(w, f, historyDoc(series, changedOnly))
}

// historyDoc lays out one block per metric: its name, how noisy it is,
// a row per commit and its warnings as notes.
func historyDoc(series []history.Series, changedOnly bool) *doc {
	var blocks []block
	for _, s := range series {
		if changedOnly && !slices.ContainsFunc(s.Commits, func(c history.Commit) bool { return c.Changed }) {
			continue
		}
		b := block{caption: s.Package + " " + s.Name + "  " + s.Unit}
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
		scale := benchunit.CommonScale(centers, benchunit.ClassOf(s.Unit))
		orUnknown := func(v *float64) string {
			if v == nil {
				return "?"
			}
			return scale.Format(*v)
		}
		tt := &table{header: []string{"commit", "date", "median", "95% CI", "n", "vs previous", ""}, code: []bool{true}}
		for _, c := range s.Commits {
			if changedOnly && !c.Changed {
				continue
			}
			ref := gitstate.Short(c.Commit)
			if c.Dirty {
				ref += "+dirty"
			}
			vs := ""
			switch {
			case c.P == nil && c.Delta == nil:
			case c.Delta == nil:
				vs = fmt.Sprintf("from 0  p=%.3f", *c.P)
			default:
				vs = fmt.Sprintf("%+.1f%%  p=%.3f", 100**c.Delta, *c.P)
			}
			cells := []string{ref, c.Time.Local().Format("2006-01-02 15:04"), scale.Format(c.Median),
				"[" + orUnknown(c.Lo) + ", " + orUnknown(c.Hi) + "]", strconv.Itoa(c.N), vs, historyMark(c)}
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
	d := &doc{}
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
