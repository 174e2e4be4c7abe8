package report

import (
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/units"
)

// LeakSentence says one leak in a line: "goroutines started at
// leftpad.awaitAudit (leak.go:32) grew by 612 per hour for 6h".
func LeakSentence(l profseries.Leak) string {
	what := "goroutines started at"
	switch {
	case l.Type == profseries.Heap && l.NewGoroutines:
		what = "heap in use for new goroutines' structures and stacks, allocated by the runtime at"
	case l.Type == profseries.Heap && l.WaitRecords:
		what = "heap in use for waiting goroutines' records (sudogs), allocated by the runtime at"
	case l.Type == profseries.Heap && l.RuntimeOnly:
		what = "heap in use allocated by the runtime for itself, at"
	case l.Type == profseries.Heap:
		what = "heap in use allocated at"
	case l.Type == profseries.GoroutineLeak:
		what = "leaked goroutines (the runtime's goroutineleak profile) started at"
	}
	return fmt.Sprintf("%s %s grew by %s per hour for %s", what, ShortFrame(l.StartedAt), leakAmount(l, l.PerHour), spanText(l.To.Sub(l.From)))
}

// LeakLevelsTitle names what a chart of a leak's levels shows.
func LeakLevelsTitle(l profseries.Leak) string {
	what := "Goroutines on this stack"
	if l.Type == profseries.Heap {
		what = "Heap in use on this stack"
	}
	if len(l.Levels) < l.Snapshots {
		return fmt.Sprintf("%s: the median of each of %d spans of the %d snapshots judged; the trend fitted, dashed", what, len(l.Levels), l.Snapshots)
	}
	return what + " in each snapshot judged; the trend fitted, dashed"
}

// LeakEvidence says what the sentence rests on: the levels seen, the
// test and its p-value.
func LeakEvidence(l profseries.Leak) string {
	return fmt.Sprintf("%s → %s over %d snapshots of process %s; Mann–Kendall z=%.1f, p=%s; later half still rising at %s per hour",
		leakAmount(l, float64(l.Start)), leakAmount(l, float64(l.End)), l.Snapshots, processText(l.Process),
		l.Trend.Z, strconv.FormatFloat(l.Trend.P, 'g', 2, 64), leakAmount(l, l.Trend.LaterSlope*3600))
}

// LeakMethod says how leaks are judged, for the header of every leak
// report.
func LeakMethod(rep *profseries.LeakReport) string {
	return fmt.Sprintf("judged per stack and process (at least %d snapshots over %s): a rising level by Mann–Kendall (one-sided, alpha %s over the stacks tested), still rising over the later half (Theil–Sen slope), grown by at least %s goroutines or %s",
		rep.MinPoints, spanText(rep.MinSpan), strconv.FormatFloat(rep.Alpha, 'g', -1, 64), units.Count(rep.MinGoroutines), units.Bytes(rep.MinBytes))
}

func leakAmount(l profseries.Leak, v float64) string {
	if l.Unit == "bytes" {
		return units.Bytes(v)
	}
	return units.Count(v)
}

// ShortFrame writes "function file:line" as "function (file.go:line)",
// the file without its directory.
func ShortFrame(f string) string {
	name, file, ok := strings.Cut(f, " ")
	if !ok {
		return f
	}
	return name + " (" + path.Base(strings.ReplaceAll(file, `\`, "/")) + ")"
}

func processText(p profseries.Process) string {
	id := p.BuildID
	if len(id) > 12 {
		id = id[:12]
	}
	if id == "" {
		id = "of unknown build"
	}
	return fmt.Sprintf("%s #%d", id, p.Generation)
}

// spanText writes a duration to the second, in its largest units: 6h,
// 1h30m, 45s.
func spanText(d time.Duration) string {
	d = d.Round(time.Second)
	s := d.String()
	for _, z := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, z) {
			s = strings.TrimSuffix(s, z[1:])
		}
	}
	return s
}

// WriteLeaks renders a leak report: the leaks named, each with its
// sentence, evidence and stack, then what was judged.
func WriteLeaks(w io.Writer, f Format, rep *profseries.LeakReport) error {
	if f == JSON {
		return writeJSON(w, rep)
	}
	d := &doc{title: "leaks " + rep.Selector, meta: []string{rangeText(rep.From, rep.To), LeakMethod(rep)}}
	b := block{caption: "Leaks named", numbered: true}
	for _, l := range rep.Leaks {
		item := []string{l.Target.String() + " " + l.Type + ": " + LeakSentence(l), LeakEvidence(l)}
		if l.Wait != "" {
			item = append(item, "waiting in "+l.Wait+" at "+ShortFrame(l.At))
		}
		for _, fr := range l.Stack {
			item = append(item, "  "+fr)
		}
		b.items = append(b.items, item)
	}
	judged := 0
	for _, j := range rep.Judged {
		judged += j.Judged
	}
	switch {
	case len(rep.Leaks) == 0 && judged == 0:
		b = block{caption: "Leaks named", lines: []string{"none judged: no process in the range has enough snapshots (see the notes below); widen the range or wait"}}
	case len(rep.Leaks) == 0:
		b = block{caption: "Leaks named", lines: []string{"none: no stack's level kept rising in the snapshots judged below"}}
	}
	t := &table{header: []string{"TARGET", "TYPE", "SNAPSHOTS", "JUDGED", "STACKS", "NOTE"}, right: []bool{false, false, true, true, true, false}}
	for _, j := range rep.Judged {
		t.add(j.Target.String(), j.Type, strconv.Itoa(j.Snapshots), strconv.Itoa(j.Judged), strconv.Itoa(j.Stacks), LeakSeriesNote(rep, j))
	}
	d.add(section{blocks: []block{b, {caption: "Series judged", table: t}}})
	return renderDoc(w, f, d)
}

// DeploySentence says one deploy in a line: when, which service, from
// which release to which.
func DeploySentence(d profseries.Deploy) string {
	return fmt.Sprintf("%s %s: %s → %s", seriesTime(d.At), d.Service, d.Before, d.After)
}

// DeployMethod says how FindDeploys judged rep's deploys.
func DeployMethod(rep *profseries.DeployReport) string {
	return fmt.Sprintf("each change of version label or build id; %s before against %s after: CPU seconds per request per scrape where the targets count requests (changes of at least %s), and each function's cum share of %s per scrape (changes of at least %s), Mann–Whitney U at alpha %s over the tests made",
		spanText(rep.Span), spanText(rep.Span), units.Percent(rep.MinPerRequestChange), rep.Type, units.Points(rep.MinChange), strconv.FormatFloat(rep.Alpha, 'g', -1, 64))
}

// DeployCompared says in a few words what a deploy was judged by, and
// why not per request where it was not.
func DeployCompared(d profseries.Deploy) string {
	if d.Compared == profseries.ComparedPerRequest {
		return "CPU per request"
	}
	if d.NotPerRequest != "" {
		return "shares of the profile (CPU per request is not known: " + d.NotPerRequest + ")"
	}
	return "shares of the profile"
}

// DeployRequests says how many requests each side of a per-request
// comparison counted; "" where none was made.
func DeployRequests(d profseries.Deploy) string {
	if d.PerRequest == nil {
		return ""
	}
	return units.Thousands(d.PerRequest.BeforeRequests) + " before, " + units.Thousands(d.PerRequest.AfterRequests) + " after"
}

// DeployRoute names a per-request change's route; the total's is "all
// requests".
func DeployRoute(c profseries.PerRequestChange) string {
	if c.Route == "" {
		return "all requests"
	}
	return c.Route
}

// DeployPerRequestChanges are the per-request changes of d, all
// requests' first; with significantRoutes, all requests' and the
// significant routes'.
func DeployPerRequestChanges(d profseries.Deploy, significantRoutes bool) []profseries.PerRequestChange {
	if d.PerRequest == nil {
		return nil
	}
	out := []profseries.PerRequestChange{d.PerRequest.Total}
	for _, c := range d.PerRequest.Routes {
		if c.Significant || !significantRoutes {
			out = append(out, c)
		}
	}
	return out
}

// DeployChangeText writes a per-request change relatively: "+104%",
// "-51%".
func DeployChangeText(c profseries.PerRequestChange) string {
	s := units.Percent(c.Change)
	if c.Change >= 0 {
		s = "+" + s
	}
	return s
}

// DeployRequestP is a per-request change's p-value as written.
func DeployRequestP(c profseries.PerRequestChange) string {
	return strconv.FormatFloat(c.P, 'g', 2, 64)
}

// DeployVerdict says why a deploy lists no change: not judged (too few
// scrapes), or no significant change; "" when it lists some.
func DeployVerdict(rep *profseries.DeployReport, d profseries.Deploy) string {
	switch {
	case !d.Judged:
		return fmt.Sprintf("not judged: %d scrapes before and %d after, %d needed on each side", d.BeforeScrapes, d.AfterScrapes, rep.MinScrapes)
	case len(d.Changes) == 0 && (d.PerRequest == nil || d.PerRequest.Significant == 0):
		return "no significant change"
	}
	return ""
}

// DeployP is a change's p-value as written.
func DeployP(c profseries.DeployChange) string { return strconv.FormatFloat(c.P, 'g', 2, 64) }

// NoShareChange says a deploy judged per request moved no function's
// share significantly.
const NoShareChange = "no function's share of the profile changed significantly"

// NoDeploy says a range holds no deploy.
const NoDeploy = "no deploy in the range: no target changed its version label or build id"

// WriteDeploys renders the deploys of a range: each with the functions
// whose share changed significantly.
func WriteDeploys(w io.Writer, f Format, rep *profseries.DeployReport) error {
	if f == JSON {
		return writeJSON(w, rep)
	}
	d := &doc{title: "deploys " + rep.Selector, meta: []string{rangeText(rep.From, rep.To), DeployMethod(rep)}}
	var blocks []block
	for _, dp := range rep.Deploys {
		b := block{caption: DeploySentence(dp), facts: [][2]string{{"scrapes", fmt.Sprintf("%d before, %d after", dp.BeforeScrapes, dp.AfterScrapes)}, {"functions tested", strconv.Itoa(dp.Tested)}, {"compared", DeployCompared(dp)}}}
		if r := DeployRequests(dp); r != "" {
			b.facts = append(b.facts, [2]string{"requests", r})
		}
		var perRequest []block
		if cs := DeployPerRequestChanges(dp, false); len(cs) > 0 {
			t := &table{header: []string{"ROUTE", "BEFORE", "AFTER", "CHANGE", "P", ""}, right: []bool{false, true, true, true, true, false}}
			for _, c := range cs {
				mark := ""
				if c.Significant {
					mark = "significant"
				}
				t.add(DeployRoute(c), units.Seconds(c.Before), units.Seconds(c.After), DeployChangeText(c), DeployRequestP(c), mark)
			}
			perRequest = append(perRequest, block{caption: "CPU per request", table: t})
		}
		if v := DeployVerdict(rep, dp); v != "" {
			b.lines = []string{v}
		} else if len(dp.Changes) == 0 {
			b.lines = []string{NoShareChange}
		} else {
			t := &table{header: []string{"FUNCTION", "BEFORE", "AFTER", "CHANGE", "P"}, right: []bool{false, true, true, true, true}}
			for _, c := range dp.Changes {
				t.add(c.Function, units.Percent(c.Before), units.Percent(c.After), units.Points(c.Delta), DeployP(c))
			}
			b.table = t
		}
		blocks = append(append(blocks, b), perRequest...)
	}
	if len(blocks) == 0 {
		blocks = []block{{lines: []string{NoDeploy}}}
	}
	d.add(section{blocks: blocks})
	return renderDoc(w, f, d)
}

// LeakSeriesNote says why part of a series' range was not judged.
func LeakSeriesNote(rep *profseries.LeakReport, j profseries.LeakSeries) string {
	var ns []string
	if j.Compacted > 0 {
		ns = append(ns, fmt.Sprintf("%d compacted windows left out (sums of snapshots, not levels)", j.Compacted))
	}
	if j.Short > 0 {
		ns = append(ns, fmt.Sprintf("%d snapshots of processes too short to judge (need %d over %s)", j.Short, rep.MinPoints, spanText(rep.MinSpan)))
	}
	if j.Every > 0 {
		ns = append(ns, "one snapshot read per "+spanText(j.Every)+" (the first of each), as the range is long")
	}
	return strings.Join(ns, "; ")
}
