//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/internal/testenv"
)

// getAPI answers GET url with its status and body.
func getAPI(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// checkMergeAPI checks that the dashboard at origin answers
// /api/v1/profiles/merge with a CPU profile that parses.
func checkMergeAPI(t *testing.T, origin string) {
	t.Helper()
	code, b := getAPI(t, origin+"/api/v1/profiles/merge?type=cpu&since=1h&query="+url.QueryEscape(`{job="leftpad"}`))
	if code != http.StatusOK {
		t.Fatalf("/api/v1/profiles/merge: %d %s", code, b)
	}
	p, err := profile.ParseData(b)
	if err != nil {
		t.Fatalf("/api/v1/profiles/merge is not a profile: %v", err)
	}
	if len(p.SampleType) != 2 || p.SampleType[1].Type != "cpu" {
		t.Errorf("/api/v1/profiles/merge: sample types %v, want CPU's", p.SampleType)
	}
}

// TestShardedScrapersShareOnePostgres runs two scrapers, shards 0/2 and
// 1/2 of one configuration of four leftpad examples (two in each shard),
// into one PostgreSQL: each scrapes its own shard's targets and no other,
// every target's series is stored once, and a dashboard on the same
// database lists them all and merges their profiles.
func TestShardedScrapersShareOnePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perfscope and runs four example services, two scrapers and a dashboard")
	}
	pg := testenv.PostgresSchema(t, "perfscope_shards")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := buildPerfscope(t)
	dir, env := t.TempDir(), os.Environ()

	modes := []string{"naive", "optimized", "naive", "optimized"}
	shards := []int{0, 1, 0, 1}
	addrs := make([]string, len(modes))
	for i, m := range modes {
		_, addrs[i] = startLeftpad(t, ctx, bin, m)
	}
	labels := func(i int, zone string) map[string]string { return leftpadLabels(addrs[i], modes[i], zone) }
	zone := shardZone(t, 2, shards, labels)
	var groups []string
	for i, a := range addrs {
		groups = append(groups, targetYAML(a, labels(i, zone)))
	}
	cfg := writeLeftpadConfig(t, dir, groups...)

	scrapers := make([]*process, 2)
	for i := range scrapers {
		scrapers[i] = startProcess(t, exec.CommandContext(ctx, bin, "scrape", "--config", cfg, "--db", pg, "--shard", fmt.Sprintf("%d/2", i), "--status-every", "1s"))
		if _, err := scrapers[i].waitFor(ctx, regexp.MustCompile(scrapeUp)); err != nil {
			t.Fatalf("scraper %d/2: %v\n%s", i, err, scrapers[i].output())
		}
	}
	types := []string{"cpu", "allocs", "heap", "goroutine"}
	eventually(t, "two scrapes of every type of every target", func() bool {
		ss := storedIn(t, bin, dir, env, pg)
		for _, a := range addrs {
			for _, typ := range types {
				if scrapesOf(ss, a, typ) < 2 {
					return false
				}
			}
		}
		return true
	})
	for i, sc := range scrapers {
		if code, err := sc.interrupt(ctx); err != nil || code != 0 {
			t.Fatalf("scraper %d/2 after SIGINT: exit status %d (%v), want 0\n%s", i, code, err, sc.output())
		}
		// Its last words are the health of every target it scraped.
		out := sc.output()
		for j, a := range addrs {
			if got, want := strings.Contains(out, a), shards[j] == i; got != want {
				t.Errorf("scraper %d/2 names target %s (shard %d/2): %v\n%s", i, a, shards[j], got, out)
			}
		}
	}

	// Each target's series once: one row per target and type, none of a
	// target not configured.
	ss := storedIn(t, bin, dir, env, pg)
	rows := map[string]int{}
	for _, s := range ss {
		if !slices.Contains(addrs, s.label("instance")) || s.label("zone") != zone {
			t.Errorf("stored a series nobody scrapes: %v", s.Labels)
		}
		rows[s.label("instance")+" "+s.Type]++
	}
	for _, a := range addrs {
		for _, typ := range types {
			if n := rows[a+" "+typ]; n != 1 {
				t.Errorf("target %s: %d %s series, want 1", a, n, typ)
			}
		}
	}

	srv := startProcess(t, exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--db", pg, "--data", t.TempDir()))
	m, err := srv.waitFor(ctx, regexp.MustCompile(dashboardUp))
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, srv.output())
	}
	code, b := getAPI(t, m[1]+"/api/v1/profiles/targets?type=cpu")
	var listed []storedSeries
	if err := json.Unmarshal(b, &listed); code != http.StatusOK || err != nil {
		t.Fatalf("/api/v1/profiles/targets: %d (%v)\n%s", code, err, b)
	}
	var got []string
	for _, s := range listed {
		got = append(got, s.label("instance"))
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(addrs))
	if !slices.Equal(got, want) {
		t.Errorf("/api/v1/profiles/targets?type=cpu lists %v, want every target once: %v", got, want)
	}
	checkMergeAPI(t, m[1])
	if code, err := srv.interrupt(ctx); err != nil || code != 0 {
		t.Errorf("serve after SIGINT: exit status %d (%v), want 0\n%s", code, err, srv.output())
	}
}

// A scrapeHealth is what /api/v1/scrape/targets says of one target.
type scrapeHealth struct {
	URL       string `json:"url"`
	Up        bool   `json:"up"`
	LastError string `json:"last_error"`
	Scrapes   int64  `json:"scrapes"`
	Collected int64  `json:"collected"`
}

// TestServeScrape runs the dashboard with a scraper inside (serve
// --scrape) over the leftpad example and a target where nothing listens:
// /api/v1/scrape/targets shows the one up and the other down with why,
// and what the scraper stored is the dashboard's to answer.
func TestServeScrape(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perfscope and runs the leftpad example and the dashboard")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := buildPerfscope(t)
	dir := t.TempDir()

	_, addr := startLeftpad(t, ctx, bin, "naive")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close() // nothing listens there any more
	cfg := writeLeftpadConfig(t, dir, targetYAML(addr, leftpadLabels(addr, "naive", "zone-a")), targetYAML(gone, leftpadLabels(gone, "naive", "zone-b")))
	srv := startProcess(t, exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "perfscope.db"), "--data", t.TempDir(), "--scrape", cfg))
	m, err := srv.waitFor(ctx, regexp.MustCompile(dashboardUp))
	if err != nil {
		t.Fatalf("serve --scrape: %v\n%s", err, srv.output())
	}
	if _, err := srv.waitFor(ctx, regexp.MustCompile(`scraping \S+ into the same store`)); err != nil {
		t.Fatalf("serve --scrape does not say it scrapes: %v\n%s", err, srv.output())
	}
	origin := m[1]
	health := map[string]scrapeHealth{}
	eventually(t, "two scrapes of each target", func() bool {
		code, b := getAPI(t, origin+"/api/v1/scrape/targets")
		var hs []scrapeHealth
		if err := json.Unmarshal(b, &hs); code != http.StatusOK || err != nil {
			t.Fatalf("/api/v1/scrape/targets: %d (%v)\n%s", code, err, b)
		}
		for _, h := range hs {
			health[hostPort(h.URL)] = h
		}
		return len(hs) == 2 && health[addr].Scrapes >= 2 && health[gone].Scrapes >= 2
	})
	if h := health[addr]; !h.Up || h.Collected == 0 {
		t.Errorf("the leftpad example's health: %+v, want up with profiles collected", h)
	}
	if h := health[gone]; h.Up || h.Collected != 0 || !strings.Contains(h.LastError, "refused") {
		t.Errorf("the target where nothing listens: %+v, want down, connection refused", h)
	}

	code, b := getAPI(t, origin+"/api/v1/profiles/targets?type=cpu")
	var listed []storedSeries
	if err := json.Unmarshal(b, &listed); code != http.StatusOK || err != nil || len(listed) != 1 || listed[0].label("instance") != addr {
		t.Errorf("/api/v1/profiles/targets?type=cpu: %d (%v), want the leftpad example's series alone:\n%s", code, err, b)
	}
	checkMergeAPI(t, origin)
	if code, err := srv.interrupt(ctx); err != nil || code != 0 {
		t.Errorf("serve --scrape after SIGINT: exit status %d (%v), want 0\n%s", code, err, srv.output())
	}
}
