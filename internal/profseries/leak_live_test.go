package profseries_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/demo"
	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/scrape"
	"github.com/perfscope/perfscope/internal/store"
)

// liveScrape is the leftpad example in each mode, run under load and
// scraped every second into a store of its own.
type liveScrape struct {
	db       *store.DB
	from, to time.Time
}

// scrapeLeftpadModes builds the leftpad example (env added to the build's
// environment), runs it in each of modes under a steady load, and scrapes
// the profiles every second with the scraper until each target has at
// least points snapshots of every type spanning span.
func scrapeLeftpadModes(t *testing.T, modes []string, types []string, points int, span time.Duration, env ...string) liveScrape {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root, err := demo.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	bin, err := demo.Build(ctx, root, "leftpad", dir)
	if err != nil {
		t.Fatal(err)
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: leftpad\n    profiles: [%s]\n    static_configs:\n", strings.Join(types, ", "))
	var svcs []*demo.Service
	defer func() {
		for _, s := range svcs {
			s.Stop()
		}
	}()
	for _, m := range modes {
		s, err := demo.Start(ctx, bin, "--mode", m, "--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0",
			"--statsd", "", "--log", filepath.Join(dir, m+".log"))
		if err != nil {
			t.Fatalf("leftpad --mode %s: %v", m, err)
		}
		svcs = append(svcs, s)
		host := strings.TrimSuffix(strings.TrimPrefix(s.PprofURL, "http://"), "/debug/pprof/")
		fmt.Fprintf(&cfg, "      - targets: [%q]\n        labels: {mode: %q}\n", host, m)
	}
	path := filepath.Join(dir, "scrape.yml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	config, err := scrape.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(dir, "profiles.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	loads := make(chan error, len(svcs))
	for _, s := range svcs {
		go func() {
			_, err := loadgen.Run(ctx, loadgen.Config{URL: s.URL + demo.APIPath["leftpad"], Concurrency: 2, Duration: time.Hour})
			loads <- err
		}()
	}
	sc := scrape.New(config, db, scrape.Options{})
	from := time.Now()
	scraped := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() { scraped <- sc.Run(sctx) }()

	deadline := time.After(10 * time.Minute)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for enough := false; !enough; {
		select {
		case <-deadline:
			t.Fatalf("no %d snapshots over %s of every target within 10 minutes: %+v", points, span, sc.Targets())
		case err := <-scraped:
			t.Fatalf("scraper stopped: %v", err)
		case <-tick.C:
		}
		ts, err := db.ProfileTargets(ctx, "", profseries.Selector{})
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for _, x := range ts {
			if x.Scrapes >= int64(points) && x.Last.Sub(x.First) >= span {
				count++
			}
		}
		enough = count == len(modes)*len(types)
	}
	stop()
	if err := <-scraped; err != nil && err != context.Canceled {
		t.Fatalf("scraper: %v", err)
	}
	cancel()
	for range svcs {
		<-loads
	}
	return liveScrape{db: db, from: from, to: time.Now()}
}

// TestLeaksOfLiveExamples runs leftpad leaky, naive and optimized under
// load, scrapes them every second with the scraper, and asks for the
// leaks: the leaky one's parked goroutines are named, with the function
// that leaks them and a positive rate; nothing is named in the others,
// which were judged on as many snapshots.
func TestLeaksOfLiveExamples(t *testing.T) {
	modes := []string{"leaky", "naive", "optimized"}
	ls := scrapeLeftpadModes(t, modes, []string{profseries.Goroutine, profseries.Heap}, 30, 30*time.Second)
	sel, err := profseries.ParseSelector(`{job="leftpad"}`)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := profseries.FindLeaks(context.Background(), ls.db, sel, ls.from, ls.to.Add(time.Second),
		profseries.LeakOptions{MinSpan: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		judged := 0
		for _, j := range rep.Judged {
			if j.Target.Get("mode") == m && j.Type == profseries.Goroutine {
				judged = j.Judged
			}
		}
		if judged < 30 {
			t.Errorf("%s: goroutines judged on %d snapshots, want at least 30: %+v", m, judged, rep.Judged)
		}
	}
	named := false
	for _, l := range rep.Leaks {
		mode := l.Target.Get("mode")
		t.Logf("%s %s: %s grew by %.0f %s per hour (%d → %d over %d snapshots, p=%.2g)", mode, l.Type, l.StartedAt, l.PerHour, l.Unit, l.Start, l.End, l.Snapshots, l.Trend.P)
		if mode != "leaky" {
			t.Errorf("a leak named in the %s mode, which leaks nothing: %s %s, %+v", mode, l.Type, l.StartedAt, l.Trend)
			continue
		}
		if l.Type == profseries.Goroutine && strings.Contains(l.StartedAt, "leftpad.awaitAudit ") {
			named = true
			if l.PerHour <= 0 || l.End <= l.Start {
				t.Errorf("the leak's rate %.1f per hour, %d → %d goroutines: want growth", l.PerHour, l.Start, l.End)
			}
			if !strings.Contains(l.At, "leak.go:") || !strings.Contains(strings.Join(l.Stack, "\n"), "runtime.gopark") {
				t.Errorf("the leak's stack does not show where it waits: at %q, stack %q", l.At, l.Stack)
			}
		}
	}
	if !named {
		t.Errorf("the leaky mode's goroutines (leftpad.awaitAudit) were not named: %+v", rep.Leaks)
	}
}
