package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/perfscope/perfscope/internal/gitstate"
	"github.com/perfscope/perfscope/internal/history"
	"github.com/perfscope/perfscope/internal/measure"
)

// WriteHistory renders per-commit series in format f: in Text one table
// per metric and line (branch and machine), a line per commit with the
// median, its confidence interval, the change from the commit before and a
// mark where the metric changed, after a line saying which commits were
// judged and which filters applied; with changedOnly, only the marked
// commits (and metrics that have one). The JSON form is history.Result:
// {"series": [history.Series...], "window": N, "filters": [...]}, every
// commit included.
func WriteHistory(w io.Writer, f Format, res *history.Result, changedOnly bool) error {
	switch f {
	case JSON:
		out := *res
		out.Series = nonNil(out.Series)
		return writeJSON(w, out)
	case Text:
	default:
		return fmt.Errorf("history has no %s form: use text or json", f)
	}
	tw := bufio.NewWriter(w)
	judged := "every commit of each series judged"
	if res.Window > 0 {
		judged = fmt.Sprintf("the latest %d commits of each series judged", res.Window)
	}
	if len(res.Filters) > 0 {
		judged += "; only " + strings.Join(res.Filters, ", ")
	}
	fmt.Fprintf(tw, "%s\n\n", judged)
	first := true
	for _, s := range res.Series {
		if changedOnly && !slices.ContainsFunc(s.Commits, func(c history.Commit) bool { return c.Changed }) {
			continue
		}
		if !first {
			fmt.Fprintln(tw)
		}
		first = false
		fmt.Fprintf(tw, "%s %s  %s  (branch %s, machine %s)\n", s.Package, s.Name, s.Unit, orNone(s.Branch), s.Machine)
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
		scale := measure.TableScale(s.Unit, centers)
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

// orNone is a branch name, or "none" for runs on no branch.
func orNone(branch string) string {
	if branch == "" {
		return "none"
	}
	return branch
}
