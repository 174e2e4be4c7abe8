package main

import (
	"context"
	"fmt"
	"time"

	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/store"
)

// The populated store ends ahead of now, every hour and ten minutes of it
// rolled up. A live one is not: a scraper (perfscope scrape, or serve
// with scrape targets) makes rollups a minute at most apart, of an hour
// ten minutes after it ends and of ten minutes a minute after they end.
// asLive makes the rollups such a scraper would have made by now
// (retention applied a minute ago, the slowest it runs), and deletes
// those it would not have made yet, at the slowest (ten minutes ending
// less than 12 minutes before now, hours less than 71), so that the pages
// read the last minutes of a range as a live store has them; restore
// makes them again, for the next run that reuses the store (as
// populating made them, at its end). The scraper also judges, after each
// pass of retention (ten minutes apart), the deploys the home page lists,
// and the store keeps the judgements of those that have settled: asLive
// judges them as at ten minutes ago, the slowest.
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
