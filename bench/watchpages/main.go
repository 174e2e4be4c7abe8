// Command watchpages measures how long the dashboard's pages of scraped
// profiles take on a store of a fleet: by default 500 targets × 24 hours
// of 10 s scrapes of CPU, heap and goroutines (26 hours stored, so that a
// 24 h range ending now is full). It populates the store (see populate.go
// for how and how realistic), starts the real dashboard (perfscope serve,
// built from this module, on a free loopback port) on it, requests every
// page -n times in each of -rounds rounds and prints p50 and p95 per page
// (the median over rounds of each), then, with -chromium, the time
// Chromium takes to paint the flame graph of a 24 h range.
//
//	go run ./bench/watchpages [-targets 500] [-hours 24] [-cache DIR] [-n 10] [-rounds 3] [-chromium] [-pages REGEXP] [-cpuprofile FILE] [-populate] [-scrape=false]
//
// -cache keeps the populated store in DIR and reuses it while it ends at
// least 30 minutes ahead of now, when it was made for the same -targets
// and -hours; else it makes it again.
// -cpuprofile FILE serves the pages in this process instead (server.New,
// as perfscope serve makes it) and writes a CPU profile of the requests,
// each labelled page=NAME: go tool pprof -tagfocus page=services FILE.
// While the pages are read, a scrape of every target and type is stored
// every 10 s, as a live scraper stores them (-scrape=false: none, a store
// that does not change).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

func main() {
	targets := flag.Int("targets", 500, "targets in the fleet")
	hours := flag.Int("hours", 24, "hours of 10 s scrapes in the range measured (2 more are stored)")
	cache := flag.String("cache", "", "keep the populated store in this directory and reuse it")
	dir := flag.String("profiles", "internal/profseries/testdata/leftpad", "the recorded scrapes replayed")
	n := flag.Int("n", 10, "requests of each page per round")
	rounds := flag.Int("rounds", 3, "rounds of requests")
	chromium := flag.Bool("chromium", false, "also time Chromium painting the flame graph of a 24 h range")
	only := flag.String("pages", "", "measure the pages whose name matches this regular expression")
	populateOnly := flag.Bool("populate", false, "populate (or move) the store and stop")
	cpuprofile := flag.String("cpuprofile", "", "serve in this process and write a CPU profile of the requests, labelled by page, to this file")
	scrape := flag.Bool("scrape", true, "store a scrape of every target every 10 s while the pages are read, as a live scraper does")
	flag.Parse()
	re, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "watchpages: -pages:", err)
		os.Exit(2)
	}
	if flag.NArg() > 0 || *targets < 1 || *hours < 1 || *n < 1 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "watchpages: usage: go run ./bench/watchpages [-targets N] [-hours H] [-cache DIR] [-n N] [-rounds R] [-chromium]")
		os.Exit(2)
	}
	if err := run(context.Background(), *targets, *hours, *cache, *dir, *n, *rounds, *chromium, *populateOnly, *scrape, *cpuprofile, re); err != nil {
		fmt.Fprintln(os.Stderr, "watchpages:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, targets, hours int, cache, dir string, n, rounds int, chromium, populateOnly, scrape bool, cpuprofile string, only *regexp.Regexp) error {
	tmp, err := os.MkdirTemp("", "watchpages")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	home := tmp
	if cache != "" {
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return err
		}
		home = cache
	}
	name := fmt.Sprintf("fleet-%dx%dh", targets, hours+2)
	dsn := filepath.Join(home, name+".db")
	f, err := populate(ctx, dsn, filepath.Join(home, name+".json"), targets, hours+2, dir)
	if err != nil {
		return err
	}
	if populateOnly {
		return nil
	}
	restore, err := asLive(ctx, dsn, time.Now(), f.End)
	if err != nil {
		return err
	}
	defer func() {
		if err := restore(); err != nil {
			fmt.Fprintln(os.Stderr, "watchpages: make the rollups again:", err)
		}
	}()
	var srv *server
	if cpuprofile != "" {
		srv, err = serveHere(ctx, tmp, dsn, cpuprofile)
	} else {
		srv, err = serve(ctx, tmp, dsn)
	}
	if err != nil {
		return err
	}
	defer srv.stop()
	if scrape {
		stop, err := scrapeLive(ctx, dsn, dir, f)
		if err != nil {
			return err
		}
		defer func() {
			n, rate, err := stop()
			fmt.Printf("%d scrapes stored while the pages were read, %.0f a second (a scraper of %d targets × %d types every %s stores %.0f)\n",
				n, rate, f.Targets, len(types), scrapeEvery, float64(f.Targets*len(types))/scrapeEvery.Seconds())
			if err != nil {
				fmt.Fprintln(os.Stderr, "watchpages: store scrapes:", err)
			}
		}()
	}
	if err := measurePages(ctx, srv.url, srv.pid, f, n, rounds, only); err != nil {
		return err
	}
	if chromium {
		return paint(ctx, srv.url, f, n, tmp)
	}
	return nil
}
