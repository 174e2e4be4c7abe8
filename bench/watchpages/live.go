package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/perfscope/perfscope/bench/scrape/sim"
	"github.com/perfscope/perfscope/internal/profseries"

	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/store"
)

// The populated store ends ahead of now, every hour and ten minutes of it
// rolled up. A live one is not: a scraper (perfscope scrape, or serve
// with scrape targets) makes rollups a minute at most apart, of an hour
// ten minutes after it ends and of ten minutes a minute after they end.
// asLive makes the rollups such a scraper would have made by now
// (retention applied a minute ago, the slowest it runs), and deletes
// those it would not have made yet, at the slowest (ten minutes starting
// less than 12 minutes before now, so ending less than 2 minutes before,
// and hours starting less than 71 minutes before, ending less than 11),
// so that the pages read the last minutes of a range as a live store
// has them; restore makes them again, for the next run that reuses the
// store (as populating made them, at its end). The scraper also judges,
// after each pass of retention (ten minutes apart), the deploys the home
// page lists, and the store keeps the judgements of those that have
// settled: asLive judges them as at ten minutes ago, the slowest.
func asLive(ctx context.Context, dsn string, now, end time.Time) (restore func() error, err error) {
	makeRollups := func(at time.Time) error {
		st, err := store.Open(ctx, dsn)
		if err != nil {
			return err
		}
		defer st.Close()
		t0 := time.Now()
		rep, err := st.ApplyRetention(ctx, at)
		if rep.RolledUp+rep.RolledUpTen > 0 {
			fmt.Printf("rollups made as at %s: %d of an hour, %d of ten minutes, in %s\n", at.Format(time.TimeOnly),
				rep.RolledUp, rep.RolledUpTen, time.Since(t0).Round(time.Second))
		}
		return err
	}
	// What the slowest scraper would have made (a run stopped before it
	// made them again may have left some out).
	if err := makeRollups(now.Add(-time.Minute)); err != nil {
		return nil, err
	}
	if err := judgeDeploys(ctx, dsn, now.Add(-10*time.Minute)); err != nil {
		return nil, err
	}
	db, rebind, err := openSQL(dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	tens, hours := int64(10*time.Minute), int64(time.Hour)
	cut := []struct{ res, from int64 }{
		{-tens, (now.Add(-12*time.Minute).UnixNano()/tens + 1) * tens},
		{-hours, (now.Add(-71*time.Minute).UnixNano()/hours + 1) * hours},
	}
	var n int64
	for _, c := range cut {
		r, err := db.ExecContext(ctx, rebind(`DELETE FROM prof_blocks WHERE resolution = ? AND start_time >= ?`), c.res, c.from)
		if err != nil {
			return nil, fmt.Errorf("delete the rollups not made yet: %w", err)
		}
		k, _ := r.RowsAffected()
		n += k
	}
	fmt.Printf("as a live store at %s: %d rollups not made yet deleted (ten minutes from %s, hours from %s)\n",
		now.Format(time.TimeOnly), n, time.Unix(0, cut[0].from).Format(time.TimeOnly), time.Unix(0, cut[1].from).Format(time.TimeOnly))
	return func() error { return makeRollups(end) }, nil
}

// judgeDeploys judges the deploys the home page lists as a scraper does
// after a pass of retention at at.
func judgeDeploys(ctx context.Context, dsn string, at time.Time) error {
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	t0 := time.Now()
	rep, err := dashboard.HomeDeploys(ctx, st, at)
	if err != nil {
		return fmt.Errorf("judge the deploys: %w", err)
	}
	fmt.Printf("deploys judged as a scraper does at %s: %d, in %s\n", at.Format(time.TimeOnly), len(rep.Deploys), time.Since(t0).Round(time.Millisecond))
	return nil
}

// scrapeEvery is how often a scraper stores a scrape of each target.
const scrapeEvery = 10 * time.Second

// scrapeLive stores, until stop is called, what a scraper of the fleet
// stores while the pages are read: every 10 s, a scrape of each type of
// every target at v2 (what runs now), through store.Append, the targets'
// scrapes spread over the 10 s as a scraper's are (each target is scraped
// at its own offset). The store already holds the fleet's scrapes up to
// its end, ahead of now, on a 10 s grid from the hour; a scrape stored now
// is 5 s off that grid, so it is one more scrape in the range ending now,
// as a live store's newest is, not one of those. Each changes the state of
// its series, so a page read again reads the store again, as on a live
// store, where the kept merge of a whole range lasts until the next
// scrape of one of its targets. stop returns how many were stored, and
// at what rate (a scraper of the fleet stores targets × types every 10 s).
func scrapeLive(ctx context.Context, dsn, dir string, f fleet) (stop func() (stored int, perSecond float64, err error), err error) {
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	replays := make([]*sim.Replay, len(types))
	for i, typ := range types {
		if replays[i], err = sim.Load(dir, []string{typ}, nil, uint64(100+i)); err != nil {
			st.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	jobs := make(chan *profseries.Scrape, 64)
	var stored atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	// Stored 8 at once, as the scraper's group commit stores them.
	for range 8 {
		g.Go(func() error {
			for sc := range jobs {
				if err := st.Append(gctx, sc); err != nil {
					return err
				}
				stored.Add(1)
			}
			return nil
		})
	}
	// period hands over the scrapes of the 10 s starting at start, each
	// target's at its offset, all taken at the middle of the 10 s of the
	// grid start is in.
	period := func(start time.Time) error {
		at := start.Truncate(scrapeEvery).Add(scrapeEvery / 2)
		scrapes := make([]*profseries.Scrape, len(types))
		for i, typ := range types {
			sc, err := replays[i].Next(typ, at)
			if err != nil {
				return err
			}
			deployed(sc.Profile, typ, at.Sub(f.Deploy))
			scrapes[i] = sc
		}
		for t := range f.Targets {
			select {
			case <-time.After(time.Until(start.Add(time.Duration(t) * scrapeEvery / time.Duration(f.Targets)))):
			case <-gctx.Done():
				return nil
			}
			for _, sc := range scrapes {
				c := *sc
				c.Profile = sc.Profile.Copy()
				c.Target = labels(t, "v2")
				c.Process = profseries.Process{BuildID: "leftpad-v2", Generation: 1}
				select {
				case jobs <- &c:
				case <-gctx.Done():
					return nil
				}
			}
		}
		return nil
	}
	g.Go(func() error {
		defer close(jobs)
		for start := time.Now(); gctx.Err() == nil; start = start.Add(scrapeEvery) {
			if err := period(start); err != nil {
				return err
			}
		}
		return nil
	})
	began := time.Now()
	return func() (int, float64, error) {
		cancel()
		err := g.Wait()
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		return int(stored.Load()), float64(stored.Load()) / time.Since(began).Seconds(), errors.Join(err, st.Close())
	}, nil
}
