// Command query measures how long the merged CPU profile of one target
// takes to answer (what a flame graph of a range asks the store) over the
// last 24 hours and over 7 days of 10 s scrapes, on SQLite and, with
// PERFSCOPE_TEST_POSTGRES set, on PostgreSQL. It builds the data once per
// engine: real recorded CPU scrapes replayed (package sim), timestamps
// injected, with the default retention applied every 6 simulated hours as
// the scraper applies it, so the older days are compacted into 1-minute
// windows as they would be. Each range is asked once untimed, then -n
// times, each time moved 10 s earlier (a range asked again would be
// answered from the merges the store keeps); the median is reported.
//
//	go run ./bench/scrape/query [-days 7] [-n 5] [-profiles DIR] [-sqlite FILE] [-pgschema NAME] [-engine sqlite|postgres] [-cpuprofile FILE]
//
// -sqlite keeps the SQLite data set in FILE, and reuses it when FILE
// already holds one (building 7 days takes minutes); -pgschema does the
// same on PostgreSQL in the schema NAME. A data set reused has the
// default retention applied once more at its end, so that what this
// version of the store keeps (compacted windows, rollups) is there as a
// fresh one would have it. -cpuprofile writes a
// CPU profile of the queries to FILE.ENGINE.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/perfscope/perfscope/bench/scrape/sim"
	"github.com/perfscope/perfscope/internal/profseries"
	"github.com/perfscope/perfscope/internal/store"
)

func main() {
	days := flag.Int("days", 7, "days of 10 s scrapes stored")
	n := flag.Int("n", 5, "queries per range")
	dir := flag.String("profiles", "internal/profseries/testdata/leftpad", "the recorded scrapes replayed")
	keep := flag.String("sqlite", "", "keep the SQLite data set in this file, reused if it holds one")
	pgschema := flag.String("pgschema", "", "keep the PostgreSQL data set in this schema, reused if it holds one")
	engine := flag.String("engine", "", "measure this engine alone: sqlite or postgres (default: both, postgres where PERFSCOPE_TEST_POSTGRES is set)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the queries to this file")
	flag.Parse()
	if err := run(*days, *n, *dir, *keep, *pgschema, *engine, *cpuprofile); err != nil {
		fmt.Fprintln(os.Stderr, "query:", err)
		os.Exit(1)
	}
}

var (
	epoch  = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	target = profseries.NewLabels(map[string]string{"job": "leftpad", "instance": "10.0.0.1:6060"})
)

func run(days, n int, dir, keep, pgschema, engine, cpuprofile string) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "query")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	sqlitePath := filepath.Join(tmp, "query.db")
	if keep != "" {
		sqlitePath = keep
	}
	var engines []struct{ name, dsn string }
	if engine == "" || engine == "sqlite" {
		engines = append(engines, struct{ name, dsn string }{"sqlite", sqlitePath})
	}
	if base := os.Getenv("PERFSCOPE_TEST_POSTGRES"); base != "" && (engine == "" || engine == "postgres") {
		dsn, drop, err := schema(ctx, base, pgschema)
		if err != nil {
			return err
		}
		defer drop()
		engines = append(engines, struct{ name, dsn string }{"postgres", dsn})
	}
	if len(engines) == 0 {
		return fmt.Errorf("no engine to measure: -engine %q (postgres needs PERFSCOPE_TEST_POSTGRES)", engine)
	}
	for _, e := range engines {
		st, err := store.Open(ctx, e.dsn)
		if err != nil {
			return err
		}
		began := time.Now()
		end := epoch.Add(time.Duration(days) * 24 * time.Hour)
		if ts, err := st.ProfileTargets(ctx, profseries.CPU, nil); err != nil || len(ts) == 0 || ts[0].Last.Before(end) {
			if end, err = fill(ctx, st, days, dir); err != nil {
				st.Close()
				return err
			}
			fmt.Printf("%s: %d days of 10 s CPU scrapes of one target stored in %s (default retention applied every 6 h)\n", e.name, days, time.Since(began).Round(time.Second))
		} else {
			if _, err := st.ApplyRetention(ctx, end); err != nil {
				st.Close()
				return err
			}
			fmt.Printf("%s: %d days of 10 s CPU scrapes of one target, as stored before in %s (retention applied again in %s)\n", e.name, days, e.dsn, time.Since(began).Round(time.Second))
		}
		if cpuprofile != "" {
			f, err := os.Create(cpuprofile + "." + e.name)
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
		}
		for _, span := range []time.Duration{24 * time.Hour, time.Duration(days) * 24 * time.Hour} {
			q := profseries.Query{Type: profseries.CPU, Selector: profseries.Exact(target), From: end.Add(-span), To: end}
			var times []time.Duration
			var samples, windows int
			// One query first, not timed: the pages read are then in
			// the cache, as for a dashboard that is in use.
			if _, err := st.MergedProfile(ctx, q); err != nil {
				st.Close()
				return err
			}
			// Each timed query asks another range, ending 10 s, 20 s, …
			// before the end: the store keeps its latest merges (a range
			// asked again is answered from memory), and a range that
			// ends on no hour reads the blocks of the partial hours at its
			// edges, as a dashboard's "last 24 h" does.
			for i := range n {
				qi := q
				qi.From, qi.To = q.From.Add(-time.Duration(i+1)*10*time.Second), q.To.Add(-time.Duration(i+1)*10*time.Second)
				t0 := time.Now()
				p, err := st.MergedProfile(ctx, qi)
				if err != nil {
					st.Close()
					return err
				}
				if err := p.Write(io.Discard); err != nil {
					st.Close()
					return err
				}
				times = append(times, time.Since(t0))
				samples = len(p.Sample)
			}
			ws, err := st.Windows(ctx, q)
			if err != nil {
				st.Close()
				return err
			}
			windows = len(ws)
			slices.Sort(times)
			fmt.Printf("  merged CPU profile over %-4s (%5d stored windows, %d stacks): median %s of %d (min %s, max %s)\n",
				span, windows, samples, times[len(times)/2].Round(time.Millisecond), n, times[0].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond))
		}
		pprof.StopCPUProfile()
		st.Close()
	}
	return nil
}

// fill stores days of CPU scrapes of target, applying the default
// retention every 6 hours of simulated time, and returns the end.
func fill(ctx context.Context, st *store.DB, days int, dir string) (time.Time, error) {
	r, err := sim.Load(dir, []string{profseries.CPU}, target, 1)
	if err != nil {
		return time.Time{}, err
	}
	rounds := days * 8640
	at := epoch
	for i := range rounds {
		at = epoch.Add(time.Duration(i) * r.Interval)
		sc, err := r.Next(profseries.CPU, at)
		if err != nil {
			return at, err
		}
		if err := st.Append(ctx, sc); err != nil {
			return at, err
		}
		if (i+1)%2160 == 0 {
			if _, err := st.ApplyRetention(ctx, at); err != nil {
				return at, err
			}
		}
	}
	end := at.Add(r.Interval)
	_, err = st.ApplyRetention(ctx, end)
	return end, err
}

// schema makes a schema of its own in the PostgreSQL database at base and
// returns the DSN that uses it, and how to drop it; with keep, the schema
// is that one, made if missing, and never dropped.
func schema(ctx context.Context, base, keep string) (string, func(), error) {
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	name := fmt.Sprintf("perfscope_bench_%d", rand.Uint64()>>1)
	if keep != "" {
		name = pgx.Identifier{keep}.Sanitize()
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+name); err != nil {
		admin.Close(ctx)
		return "", nil, err
	}
	drop := func() {
		if keep == "" {
			admin.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
		}
		admin.Close(context.Background())
	}
	if keep != "" {
		name = keep
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}
