package profseries_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// A liveTarget is one leftpad example to run, and the labels its target
// gets besides job="leftpad"; path is the request it is loaded with, the
// example's own (demo.APIPath) when "".
type liveTarget struct {
	mode   string
	labels map[string]string
	path   string
}

// buildLeftpad builds the leftpad example and opens a store beside it.
func buildLeftpad(t *testing.T) (bin string, db *store.DB) {
	t.Helper()
	root, err := demo.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if bin, err = demo.Build(context.Background(), root, "leftpad", dir); err != nil {
		t.Fatal(err)
	}
	if db, err = store.Open(context.Background(), filepath.Join(dir, "profiles.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return bin, db
}

// scrapeLeftpad runs the example bin in each target's mode under a steady
// load, and scrapes their profiles of types every second with the scraper
// into db until each target has at least points scrapes of every type
// spanning span; then it stops them all.
func scrapeLeftpad(t *testing.T, bin string, db *store.DB, targets []liveTarget, types []string, points int, span time.Duration) liveScrape {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: leftpad\n    profiles: [%s]\n    static_configs:\n", strings.Join(types, ", "))
	var svcs []*demo.Service
	defer func() {
		for _, s := range svcs {
			s.Stop()
		}
	}()
	var hosts []string
	for i, lt := range targets {
		s, err := demo.Start(ctx, bin, "--mode", lt.mode, "--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0",
			"--statsd", "", "--log", filepath.Join(dir, fmt.Sprintf("access-%d.log", i)))
		if err != nil {
			t.Fatalf("leftpad --mode %s: %v", lt.mode, err)
		}
		svcs = append(svcs, s)
		host := strings.TrimSuffix(strings.TrimPrefix(s.PprofURL, "http://"), "/debug/pprof/")
		hosts = append(hosts, host)
		var ls []string
		for k, v := range lt.labels {
			ls = append(ls, fmt.Sprintf("%s: %q", k, v))
		}
		fmt.Fprintf(&cfg, "      - targets: [%q]\n        labels: {%s}\n", host, strings.Join(ls, ", "))
	}
	path := filepath.Join(dir, "scrape.yml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	config, err := scrape.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	loads := make(chan error, len(svcs))
	for i, s := range svcs {
		req := targets[i].path
		if req == "" {
			req = demo.APIPath["leftpad"]
		}
		go func() {
			_, err := loadgen.Run(ctx, loadgen.Config{URL: s.URL + req, Concurrency: 2, Duration: time.Hour})
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
			t.Fatalf("no %d scrapes over %s of every target within 10 minutes: %+v", points, span, sc.Targets())
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
			if slices.Contains(hosts, x.Labels.Get("instance")) && x.Scrapes >= int64(points) && x.Last.Sub(x.First) >= span {
				count++
			}
		}
		enough = count == len(targets)*len(types)
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
	var targets []liveTarget
	for _, m := range modes {
		targets = append(targets, liveTarget{mode: m, labels: map[string]string{"mode": m}})
	}
	bin, db := buildLeftpad(t)
	ls := scrapeLeftpad(t, bin, db, targets, []string{profseries.Goroutine, profseries.Heap}, 30, 30*time.Second)
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
