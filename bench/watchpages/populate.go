package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/perfscope/perfscope/bench/scrape/sim"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/store"
)

// The fleet: services, each with targets/len(services) instances; every
// instance replays the leftpad recording (the one real recording there
// is), deployed from v1 to v2 at the middle of the span.
var services = []string{"leftpad", "txsummary", "render", "router", "ingest"}

// The types stored: those the service pages' gauges read (CPU, heap in
// use, goroutines), which are also what leaks and deploys judge.
var types = []string{profseries.CPU, profseries.Heap, profseries.Goroutine}

// What v2 changes, so that the deploy and leak pages have work: CPU in
// stacks through slowFunc costs twice as much, and goroutines parked in
// leakFunc grow by one a minute.
const (
	slowFunc = "strings.(*Replacer).build"
	leakFunc = "examples/leftpad.(*statsd).send"
)

// A fleet is a populated store: its span, and the size it was made for.
type fleet struct {
	Targets int       `json:"targets"`
	Hours   int       `json:"hours"`
	End     time.Time `json:"end"`
	Deploy  time.Time `json:"deploy"`
	Made    string    `json:"made"` // how long populating took, and at what rate
}

func (f fleet) start() time.Time { return f.End.Add(-time.Duration(f.Hours) * time.Hour) }

// labels of target i at version v.
func labels(i int, v string) profseries.Labels {
	return profseries.NewLabels(map[string]string{
		"job":      services[i%len(services)],
		"instance": fmt.Sprintf("10.1.%d.%d:6060", i/256, i%256),
		"version":  v,
	})
}

// wantEnd is the end a store measured now should have: a whole hour (as
// a live store's hourly rollups are) at least 30 minutes ahead, so the ranges ending now, 15 minutes to 24
// hours, hold data for the whole measurement.
func wantEnd(now time.Time) time.Time {
	end := now.Truncate(time.Hour).Add(time.Hour)
	if end.Sub(now) < 30*time.Minute {
		end = end.Add(time.Hour)
	}
	return end
}

// populate makes, or reuses from meta's file, the fleet's store at dsn.
func populate(ctx context.Context, dsn, meta string, targets, hours int, dir string) (fleet, error) {
	if b, err := os.ReadFile(meta); err == nil {
		var f fleet
		if err := json.Unmarshal(b, &f); err == nil && f.Targets == targets && f.Hours == hours {
			if wantEnd(time.Now()).Sub(f.End) <= 0 && f.End.Sub(time.Now()) >= 30*time.Minute {
				fmt.Printf("reusing the store made before (%s), ending %s\n", f.Made, f.End.Format(time.RFC3339))
				return f, nil
			}
			// Moving every row of a store by whole hours took longer than
			// making it again (over ten minutes at 500 targets, against
			// under four).
			fmt.Printf("the store made before ends %s, less than 30 minutes from now: making it again\n", f.End.Format(time.RFC3339))
		}
	}
	// Whatever is there (a store too old, or one a stopped run left
	// half made) goes.
	for _, name := range []string{meta, dsn, dsn + "-wal", dsn + "-shm"} {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fleet{}, err
		}
	}
	began := time.Now()
	end := wantEnd(time.Now())
	f := fleet{Targets: targets, Hours: hours, End: end, Deploy: end.Add(-time.Duration(hours) * time.Hour / 2).Truncate(time.Hour)}
	rounds := hours * 360
	n, err := template(ctx, dsn, f, dir)
	if err != nil {
		return f, err
	}
	appendRate := float64(n) / time.Since(began).Seconds()
	fmt.Printf("template target: %d scrapes (%d rounds × %d types) appended in %s: %.0f scrapes/s\n", n, rounds, len(types), time.Since(began).Round(time.Second), appendRate)
	t1 := time.Now()
	rows, err := clone(ctx, dsn, f)
	if err != nil {
		return f, err
	}
	cloned := time.Since(t1)
	total := targets * rounds * len(types)
	fmt.Printf("%d more targets cloned from the template in %s: %d blocks, %.0f blocks/s\n", targets-1, cloned.Round(time.Second), rows, float64(rows)/cloned.Seconds())
	f.Made = fmt.Sprintf("%d scrapes stored in %s (template %.0f appends/s, then clones at %.0f blocks/s)", total, time.Since(began).Round(time.Second), appendRate, float64(rows)/cloned.Seconds())
	b, _ := json.Marshal(f)
	if meta != "" {
		if err := os.WriteFile(meta, b, 0o644); err != nil {
			return f, err
		}
	}
	return f, nil
}

// template appends the whole span of target 0, every type, through
// store.Append as the scraper does (group commit: several Appends at
// once), then applies the default retention as the scraper would at the
// end (the hourly rollups). It returns the scrapes appended.
func template(ctx context.Context, dsn string, f fleet, dir string) (int, error) {
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	rounds := f.Hours * 360
	start := f.start()
	jobs := make(chan *profseries.Scrape, 64)
	errc := make(chan error, len(types)+8)
	var prod sync.WaitGroup
	for ti, typ := range types {
		r, err := sim.Load(dir, []string{typ}, nil, uint64(ti+1))
		if err != nil {
			return 0, err
		}
		prod.Add(1)
		go func() {
			defer prod.Done()
			for i := range rounds {
				at := start.Add(time.Duration(i) * r.Interval)
				sc, err := r.Next(typ, at)
				if err != nil {
					errc <- err
					return
				}
				v, build := "v1", "leftpad-v1"
				if !at.Before(f.Deploy) {
					v, build = "v2", "leftpad-v2"
					deployed(sc.Profile, typ, at.Sub(f.Deploy))
				}
				sc.Target = labels(0, v)
				sc.Process = profseries.Process{BuildID: build, Generation: 1}
				select {
				case jobs <- sc:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { prod.Wait(); close(jobs) }()
	var cons sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for range 8 {
		cons.Add(1)
		go func() {
			defer cons.Done()
			for sc := range jobs {
				if err := st.Append(ctx, sc); err != nil {
					errc <- err
					return
				}
				mu.Lock()
				n++
				if n%5000 == 0 {
					fmt.Printf("  %d of %d appended\n", n, rounds*len(types))
				}
				mu.Unlock()
			}
		}()
	}
	cons.Wait()
	select {
	case err := <-errc:
		return n, err
	default:
	}
	if _, err := st.ApplyRetention(ctx, f.End); err != nil {
		return n, err
	}
	return n, nil
}

// deployed changes a scrape of v2, taken d after the deploy: CPU through
// slowFunc doubled, goroutines in leakFunc one more a minute.
func deployed(p *profile.Profile, typ string, d time.Duration) {
	through := func(s *profile.Sample, fn string) bool {
		for _, l := range s.Location {
			for _, ln := range l.Line {
				if ln.Function != nil && strings.HasSuffix(ln.Function.Name, fn) {
					return true
				}
			}
		}
		return false
	}
	switch typ {
	case profseries.CPU:
		for _, s := range p.Sample {
			if through(s, slowFunc) {
				for j := range s.Value {
					s.Value[j] *= 2
				}
			}
		}
	case profseries.Goroutine:
		for _, s := range p.Sample {
			if through(s, leakFunc) {
				s.Value[0] += int64(d / time.Minute)
				break
			}
		}
	}
}

// clone copies target 0's series to every other target of the fleet: one
// INSERT … SELECT of its blocks (rollups included) and packs per series.
// The blocks' symbols are the store's, shared by every series, so a copied block
// reads as the template's does.
func clone(ctx context.Context, dsn string, f fleet) (int64, error) {
	db, rebind, err := openSQL(dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	type series struct {
		id            int64
		labels, typ   string
		version, kind string
		// the summary the store keeps of the series (see store's
		// migration10)
		first, last, scrapes, blocks, bytes, recordedFrom int64
	}
	var tpl []series
	rows, err := db.QueryContext(ctx, `SELECT id, labels, type, first_time, last_time, scrapes, blocks, bytes, recorded_from FROM prof_series`)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var s series
		if err := rows.Scan(&s.id, &s.labels, &s.typ, &s.first, &s.last, &s.scrapes, &s.blocks, &s.bytes, &s.recordedFrom); err != nil {
			rows.Close()
			return 0, err
		}
		tpl = append(tpl, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var total int64
	const perTx = 10
	for first := 1; first < f.Targets; first += perTx {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return total, err
		}
		for i := first; i < min(first+perTx, f.Targets); i++ {
			for _, s := range tpl {
				var pairs [][2]string
				if err := json.Unmarshal([]byte(s.labels), &pairs); err != nil {
					tx.Rollback()
					return total, err
				}
				m := map[string]string{}
				for _, p := range pairs {
					m[p[0]] = p[1]
				}
				ls := labels(i, m["version"])
				out := make([][2]string, len(ls))
				for k, l := range ls {
					out[k] = [2]string{l.Name, l.Value}
				}
				key, _ := json.Marshal(out)
				var id int64
				if err := tx.QueryRowContext(ctx, rebind(`INSERT INTO prof_series (labels, type, first_time, last_time, scrapes, blocks, bytes, recorded_from)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`), string(key), s.typ, s.first, s.last, s.scrapes, s.blocks, s.bytes, s.recordedFrom).Scan(&id); err != nil {
					tx.Rollback()
					return total, err
				}
				// The records of its scrapes, as the template's.
				if _, err := tx.ExecContext(ctx, rebind(`INSERT INTO prof_gauges
					(series_id, width, start_time, process_id, first_start, last_end, scrapes, gauged, total, duration, first_shape, first_levels)
					SELECT ?, width, start_time, process_id, first_start, last_end, scrapes, gauged, total, duration, first_shape, first_levels
					FROM prof_gauges WHERE series_id = ?`), id, s.id); err != nil {
					tx.Rollback()
					return total, err
				}
				res, err := tx.ExecContext(ctx, rebind(`INSERT INTO prof_blocks
					(series_id, resolution, start_time, end_time, duration, process_id, shape_id, samples, raw_bytes, data, levels, scrapes)
					SELECT ?, resolution, start_time, end_time, duration, process_id, shape_id, samples, raw_bytes, data, levels, scrapes
					FROM prof_blocks WHERE series_id = ?`), id, s.id)
				if err != nil {
					tx.Rollback()
					return total, err
				}
				n, _ := res.RowsAffected()
				total += n
				// The packs its blocks refer to.
				if _, err := tx.ExecContext(ctx, rebind(`INSERT INTO prof_packs (series_id, resolution, start_time, data)
					SELECT ?, resolution, start_time, data FROM prof_packs WHERE series_id = ?`), id, s.id); err != nil {
					tx.Rollback()
					return total, err
				}
			}
		}
		if err := tx.Commit(); err != nil {
			return total, err
		}
		if (first-1)%100 == 0 {
			fmt.Printf("  %d of %d targets cloned\n", first-1+perTx, f.Targets-1)
		}
	}
	return total, nil
}

// openSQL opens the store's database itself, for the copies a store's
// API has no call for; rebind writes a query's placeholders as its
// engine takes them.
func openSQL(dsn string) (*sql.DB, func(string) string, error) {
	if store.IsPostgres(dsn) {
		db, err := sql.Open("pgx", dsn)
		return db, func(q string) string {
			var b strings.Builder
			n := 0
			for _, c := range q {
				if c == '?' {
					n++
					fmt.Fprintf(&b, "$%d", n)
					continue
				}
				b.WriteRune(c)
			}
			return b.String()
		}, err
	}
	db, err := sql.Open("sqlite", dsn+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	db.SetMaxOpenConns(1)
	return db, func(q string) string { return q }, err
}
