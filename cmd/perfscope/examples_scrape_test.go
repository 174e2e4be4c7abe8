//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// scrapedTargets are the two leftpad examples scrape.yml lists: the naive
// one, which the scrape lines load, in shard 0 of 2, and the optimized
// one in shard 1.
type scrapedTargets struct {
	naiveAPI         string // the naive example's origin
	naive, optimized string // the targets' host:port
	// first and last bound the naive target's CPU scrapes the SQLite
	// scrape line stored.
	first, last time.Time
}

// scrapeConfig starts the naive leftpad example and writes scrape.yml in
// the scratch module over it and the optimized example, each labelled into
// a shard of its own of two.
func (e *exampleEnv) scrapeConfig(t *testing.T, ctx context.Context) {
	t.Helper()
	lp := e.start(t, exec.Command(e.bin, "example", "leftpad", "--mode", "naive", "--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0"))
	m, err := lp.waitFor(ctx, regexp.MustCompile(exampleUp))
	if err != nil {
		t.Fatalf("naive leftpad example: %v\n%s", err, lp.output())
	}
	s := &e.scraped
	s.naiveAPI, s.naive, s.optimized = m[1], hostPort(m[2]), hostPort(e.leftpadPprof)
	addrs, modes := []string{s.naive, s.optimized}, []string{"naive", "optimized"}
	labels := func(i int, zone string) map[string]string { return leftpadLabels(addrs[i], modes[i], zone) }
	zone := shardZone(t, 2, []int{0, 1}, labels)
	writeLeftpadConfig(t, e.module, targetYAML(s.naive, labels(0, zone)), targetYAML(s.optimized, labels(1, zone)))
}

// scrapeUntil loads the naive example while the scrape line's store db
// fills, until done holds of what it stores.
func (e *exampleEnv) scrapeUntil(t *testing.T, db, what string, done func([]storedSeries) bool) []storedSeries {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := loadLeftpad(t, ctx, e.bin, e.scraped.naiveAPI)
	defer stop()
	var ss []storedSeries
	eventually(t, what, func() bool {
		ss = storedIn(t, e.bin, e.module, e.env, db)
		return done(ss)
	})
	return ss
}

// scrapeCases are the lines of 'perfscope scrape' and 'perfscope query':
// the scrape line fills scrape.db with both examples of scrape.yml, the
// naive one under load, and the query lines read it.
func scrapeCases() []exampleCase {
	sel := `'{job="leftpad"}'`
	return []exampleCase{
		{line: "perfscope scrape --config scrape.yml --db scrape.db",
			ready: regexp.MustCompile(scrapeUp),
			up: func(t *testing.T, e *exampleEnv, m []string) {
				s := &e.scraped
				// The query lines ask for leftpad's CPU: on a busy machine a
				// scrape may hold none of it, so scraping goes on until one does.
				seen := ""
				ss := e.scrapeUntil(t, "scrape.db", "three CPU and allocs scrapes of the naive example, one of the optimized, and CPU time in "+leftpadFunc, func(ss []storedSeries) bool {
					cpu, allocs, optimized := scrapesOf(ss, s.naive, "cpu"), scrapesOf(ss, s.naive, "allocs"), scrapesOf(ss, s.optimized, "cpu")
					// In any stack, not only as the leaf: leftpad's own loop
					// is a sliver of a request (its time is in the string
					// copies it calls), so a scrape of a busy machine's few
					// samples often holds none of it as the leaf.
					in := cpu > 0 && strings.Contains(okCLI(t, e.bin, e.module, e.env, "query", "top", "--db", "scrape.db", "--since", "6h", "--cum", "-n", "1000", strings.Trim(sel, "'")), leftpadFunc+"\n")
					// What is stored so far, said when it changes: a test
					// that gives up says how far it got.
					if now := fmt.Sprintf("naive: %d CPU and %d allocs scrapes, CPU in %s: %v; optimized: %d CPU scrapes", cpu, allocs, leftpadFunc, in, optimized); now != seen {
						seen = now
						t.Log(now)
					}
					return cpu >= 3 && allocs >= 3 && optimized >= 1 && in
				})
				for _, x := range ss {
					if x.label("instance") == s.naive && x.Type == "cpu" {
						s.first, s.last = x.First, x.Last
					}
				}
			}},
		{line: "perfscope query targets --db scrape.db " + sel,
			check: func(t *testing.T, e *exampleEnv, out string) {
				has(e.scraped.naive, e.scraped.optimized, `service="left pad"`, `team="pay-ments ✓"`, "cpu", "allocs", "heap", "goroutine")(t, e, out)
			}},
		{line: "perfscope query merge --db scrape.db --since 24h " + sel + " -o default.pgo",
			check: has("wrote default.pgo: cpu", "go tool pprof default.pgo")},
		{line: "go tool pprof -top default.pgo",
			check: has("Type: cpu", "flat%", "runtime.")},
		{line: "perfscope query top --db scrape.db --since 10m --type allocs " + sel,
			check: has("alloc_space", leftpadFunc+"\n")},
		{line: "perfscope query function --db scrape.db --since 6h --step 10m " + leftpadFunc + " " + sel,
			check: func(t *testing.T, e *exampleEnv, out string) {
				has(leftpadFunc, "share of cpu per step")(t, e, out)
				if !regexp.MustCompile(`%\s+[1-9][0-9]*\n`).MatchString(out) {
					t.Error("no step of scrapes")
				}
			}},
		{line: "perfscope query diff --db scrape.db --since 10m --ago 1h " + sel,
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				s := e.scraped
				if s.first.IsZero() {
					t.Fatal("no scrapes: the scrape line failed")
				}
				mid := s.first.Add(s.last.Sub(s.first) / 2)
				return []string{"--ago 1h", fmt.Sprintf("--ago %ds", int(time.Since(mid).Seconds())+1)}
			},
			why:   "the scrape ran for seconds, not an hour before: the base is the range shifted back to end halfway through it",
			check: has("base ", "head ", "Functions by change of flat share")},
		{line: "perfscope query findings --db scrape.db --since 10m " + sel,
			check: has(`perfscope report: profiles scraped from {job="leftpad"}`, "FINDINGS", "(built-per-call)")},
		{line: "perfscope query leaks --db scrape.db --since 1h " + sel,
			check: has(`leaks {job="leftpad"}`, "Series judged", "goroutine")},
		{line: "perfscope query deploys --db scrape.db --since 24h " + sel,
			check: has(`deploys {job="leftpad"}`, "no deploy in the range")},
		{line: "perfscope serve --scrape scrape.yml --db scrape.db",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"serve --scrape", "serve --addr 127.0.0.1:0 --scrape"}
			},
			why:   "port 0: the default 127.0.0.1:7070 may be taken here",
			ready: regexp.MustCompile(dashboardUp),
			up: func(t *testing.T, e *exampleEnv, m []string) {
				s := e.scraped
				health := map[string]scrapeHealth{}
				eventually(t, "a finished scrape of each target in /api/v1/scrape/targets", func() bool {
					code, b := getAPI(t, m[1]+"/api/v1/scrape/targets")
					var hs []scrapeHealth
					if err := json.Unmarshal(b, &hs); code != http.StatusOK || err != nil {
						t.Fatalf("/api/v1/scrape/targets: %d (%v)\n%s", code, err, b)
					}
					for _, h := range hs {
						health[hostPort(h.URL)] = h
					}
					// Up is known once a scrape has finished: snapshots are
					// stored while the CPU profile of the first one is still taken.
					return health[s.naive].Scrapes > 0 && health[s.optimized].Scrapes > 0 && health[s.naive].Collected > 0 && health[s.optimized].Collected > 0
				})
				if !health[s.naive].Up || !health[s.optimized].Up {
					t.Errorf("targets not up: %+v", health)
				}
				checkMergeAPI(t, m[1])
			}},
		{line: "perfscope scrape --config scrape.yml --db " + placeDB + " --shard 0/2", postgres: true,
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{placeDB, "'" + e.pg + "'"} },
			ready:   regexp.MustCompile(scrapeUp),
			up: func(t *testing.T, e *exampleEnv, m []string) {
				if u, err := url.Parse(e.pg); err == nil && u.User != nil && strings.Contains(m[0], u.User.String()+"@") {
					t.Errorf("the store's user and password show in %q", m[0])
				}
				s := e.scraped
				ss := e.scrapeUntil(t, e.pg, "a CPU scrape of the naive example, shard 0's", func(ss []storedSeries) bool {
					return scrapesOf(ss, s.naive, "cpu") >= 1
				})
				for _, x := range ss {
					if x.label("instance") == s.optimized {
						t.Errorf("shard 0/2 stored %s %s, a target of shard 1", x.Type, s.optimized)
					}
				}
			}},
		{line: "perfscope scrape --config scrape.yml --db " + placeDB + " --shard 1/2", postgres: true,
			rewrite: func(t *testing.T, e *exampleEnv) []string { return []string{placeDB, "'" + e.pg + "'"} },
			ready:   regexp.MustCompile(scrapeUp),
			up: func(t *testing.T, e *exampleEnv, m []string) {
				// Shard 0/2 stopped: the naive target's scrapes stay as it
				// left them while shard 1/2 scrapes the optimized one.
				s := e.scraped
				before := scrapesOf(storedIn(t, e.bin, e.module, e.env, e.pg), s.naive, "cpu")
				ss := e.scrapeUntil(t, e.pg, "two CPU scrapes of the optimized example, shard 1's", func(ss []storedSeries) bool {
					return scrapesOf(ss, s.optimized, "cpu") >= 2
				})
				if after := scrapesOf(ss, s.naive, "cpu"); after != before {
					t.Errorf("shard 1/2 scraped %s, a target of shard 0: %d CPU scrapes, %d before it started", s.naive, after, before)
				}
			}},
		{line: "perfscope demo watch -d 30s",
			rewrite: func(t *testing.T, e *exampleEnv) []string {
				return []string{"-d 30s", "-d 8s --interval 2s --no-source --db watch.db"}
			},
			why: "the scrape is shortened to keep the test short; the store is the test's own; --no-source skips the compiler's build, which other lines test",
			check: has("3 targets, ", `cpu {job="leftpad", mode="naive"}`, `cpu {job="txsummary", mode="naive"}`,
				`perfscope report: profiles scraped from {job="leftpad", mode="naive"}`, "perfscope query findings --db watch.db")},
	}
}
