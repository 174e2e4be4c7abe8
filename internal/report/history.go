package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchunit"

	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/history"
)

// WriteHistory renders per-commit series in format f: in Text one table
// per metric, a line per commit with the median, its confidence interval,
// the change from the commit before and a mark where the metric changed;
// with changedOnly, only the marked commits (and metrics that have one),
// or a line saying there are none.
// The JSON form is {"series": [history.Series...]}, every commit included.
func WriteHistory(w io.Writer, f Format, series []history.Series, changedOnly bool) error {
	switch f {
	case JSON:
		return writeJSON(w, struct {
			Series []history.Series `json:"series"`
		}{nonNil(series)})
	case Text:
	default:
		return fmt.Errorf("history has no %s form: use text or json", f)
	}
	tw := bufio.NewWriter(w)
	first := true
	for _, s := range series {
		if changedOnly && !slices.ContainsFunc(s.Commits, func(c history.Commit) bool { return c.Changed }) {
			continue
		}
		if !first {
			fmt.Fprintln(tw)
		}
		first = false
		fmt.Fprintf(tw, "%s %s  %s\n", s.Package, s.Name, s.Unit)
		switch {
		case s.Noise != nil && *s.Noise == 0:
			fmt.Fprintln(tw, "no noise between commits: every significant change is marked")
		case s.Noise != nil:
			fmt.Fprintf(tw, "noise ±%.1f%% per commit; changes beyond %+.1f%% / %+.1f%% are marked\n",
				100**s.Noise, 100**s.Threshold, 100*(1/(1+*s.Threshold)-1))
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
		tt := &TextTable{Columns: []TextColumn{{Heading: "commit"}, {Heading: "date"}, {Heading: "median"}, {Heading: "95% CI"}, {Heading: "n"}, {Heading: "vs previous"}, {}}}
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
			tt.AddRow(ref, c.Time.Local().Format("2006-01-02 15:04"), scale.Format(c.Median),
				"["+orUnknown(c.Lo)+", "+orUnknown(c.Hi)+"]", strconv.Itoa(c.N), vs, historyMark(c))
		}
		if err := tt.WriteText(tw); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
		for _, warn := range s.Warnings {
			fmt.Fprintf(tw, "note: %s\n", warn)
		}
	}
	if changedOnly && first {
		// Nothing marked: say so, not an empty output that reads as a
		// failure to run.
		fmt.Fprintf(tw, "no commit marked changed in %d metric%s; without --changed every commit shows, with why none is marked\n",
			len(series), plural(len(series)))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
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
