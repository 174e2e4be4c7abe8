package report

import (
	"io"
	"strconv"
	"time"

	"github.com/perfscope/perfscope/internal/scrape"
	"github.com/perfscope/perfscope/internal/units"
)

// WriteScrapeStatus says how a scraper's targets are doing: one line of
// counts, then a line per target that is down or missed profiles. With
// all, a table of every target follows (as when the scraper stops).
func WriteScrapeStatus(w io.Writer, hs []scrape.Health, all bool) error {
	up, collected, missed, dropped := 0, int64(0), int64(0), int64(0)
	var late time.Duration
	for _, h := range hs {
		if h.Up {
			up++
		}
		collected += h.Collected
		missed += h.Missed
		dropped += h.Dropped
		late = max(late, h.MaxLateness)
	}
	line := time.Now().Format("15:04:05") + " " + strconv.Itoa(len(hs)) + " target" + plural(len(hs)) + ", " + strconv.Itoa(up) + " up; " +
		strconv.FormatInt(collected, 10) + " profile" + plural(int(collected)) + " stored; latest start " + units.Seconds(late.Seconds()) + " after due"
	if missed > 0 {
		line += "; " + strconv.FormatInt(missed, 10) + " scrapes missed"
	}
	if dropped > 0 {
		line += "; " + strconv.FormatInt(dropped, 10) + " profiles dropped (the store is behind)"
	}
	b := block{lines: []string{line}}
	for _, h := range hs {
		if h.LastError != "" || !h.Up && h.Scrapes > 0 {
			why := h.LastError
			if why == "" {
				why = "nothing collected"
			}
			b.lines = append(b.lines, "  "+health(h)+" "+h.Labels.String()+" "+h.URL+": "+why)
		}
	}
	d := &doc{}
	d.add(section{blocks: []block{b}})
	if all && len(hs) > 0 {
		t := &table{header: []string{"TARGET", "URL", "HEALTH", "SCRAPES", "FAILED", "LAST", "TOOK", "LAST ERROR"}, right: []bool{false, false, false, true, true, false, true, false}}
		for _, h := range hs {
			last := "never"
			if !h.LastScrape.IsZero() {
				last = h.LastScrape.Local().Format("15:04:05")
			}
			t.add(h.Labels.String(), h.URL, health(h), strconv.FormatInt(h.Scrapes, 10), strconv.FormatInt(h.Failures, 10), last, units.Seconds(h.LastDuration.Seconds()), h.LastError)
		}
		d.add(section{blocks: []block{{table: t}}})
	}
	return renderDoc(w, Text, d)
}

// health names a target's state in one word.
func health(h scrape.Health) string {
	switch {
	case h.Scrapes == 0:
		return "waiting"
	case h.Up && h.LastError == "":
		return "up"
	case h.Up:
		return "partly"
	}
	return "down"
}
