package report

import (
	"strings"
	"testing"

	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/scrape"
)

// TestScrapeStatusDropped: profiles the store could not take are counted
// on the status line, and the target's line says why.
func TestScrapeStatusDropped(t *testing.T) {
	hs := []scrape.Health{
		{Labels: profseries.NewLabels(map[string]string{"instance": "a:1"}), URL: "http://a:1/debug/pprof/", Up: true, Scrapes: 3, Collected: 10, Dropped: 2,
			LastError: "cpu: not stored: the store is behind (its queue is full); profile dropped"},
		{Labels: profseries.NewLabels(map[string]string{"instance": "b:1"}), URL: "http://b:1/debug/pprof/", Up: true, Scrapes: 3, Collected: 12},
	}
	var b strings.Builder
	if err := WriteScrapeStatus(&b, hs, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"2 targets, 2 up; 22 profiles stored", "; 2 profiles dropped (the store is behind)", "partly {instance=\"a:1\"}"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}
