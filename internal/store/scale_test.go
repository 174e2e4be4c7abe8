package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/cputime"
)

// The store's performance goals: a trend page (one benchmark metric over
// all commits) under 100 ms at p95 with 5,000 commits × 200 benchmarks × 3
// units × 10 samples, and a 200-benchmark run ingested in under a second.
//
//	go test ./internal/store -run '^$' -bench . -benchtime 50x
//
// PERFSCOPE_SCALE_COMMITS sets the commits of the large database (default
// 500, as 5,000 takes minutes to build); PERFSCOPE_SCALE_DB keeps it in a
// file for the next run instead of a temporary directory. With
// PERFSCOPE_TEST_POSTGRES set, PostgreSQL is measured too.

const (
	scaleBenchmarks = 200
	scaleSamples    = 10
)

var scaleUnits = []string{"sec/op", "B/op", "allocs/op"}

// scaleStores returns the stores to measure, each holding commits runs.
func scaleStores(b *testing.B, commits int) map[string]*DB {
	stores := make(map[string]*DB)
	path := os.Getenv("PERFSCOPE_SCALE_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "scale.db")
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	fillScale(b, s, commits)
	stores["sqlite"] = s
	if os.Getenv("PERFSCOPE_TEST_POSTGRES") != "" {
		pg, _ := openTestPostgres(b)
		fillScale(b, pg, commits)
		stores["postgres"] = pg
	}
	return stores
}

// fillScale adds runs until s holds commits of them. It writes many runs per
// transaction: it builds a fixture, it does not measure ingest.
func fillScale(b *testing.B, s *DB, commits int) {
	ctx := context.Background()
	var have int
	if err := s.b.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM bench_runs WHERE branch = 'main'").Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have >= commits {
		return
	}
	start := time.Now()
	run := BenchRun{Commit: "seed", Branch: "main", Machine: machineA, Results: parseBench(b, scaleRunText(0))}
	if _, err := s.SaveBenchRun(ctx, run); err != nil { // creates the series
		b.Fatal(err)
	}
	have++
	rng := rand.New(rand.NewPCG(1, 1))
	vals := make([]float64, scaleSamples)
	for have < commits {
		tx, err := s.b.db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		insRun, err := tx.PrepareContext(ctx, s.b.q(`INSERT INTO bench_runs (commit_hash, branch, dirty, commit_time, run_time, sort_time, machine_id, go_version, package)
			VALUES (?, 'main', false, ?, ?, ?, 1, 'go1.26', '') RETURNING id`))
		if err != nil {
			b.Fatal(err)
		}
		insSamples, err := tx.PrepareContext(ctx, s.b.q(`INSERT INTO samples (series_id, run_id, n, vals) VALUES (?, ?, ?, ?)`))
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 100 && have < commits; i++ {
			t := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(have) * time.Hour).UnixNano()
			var id int64
			if err := insRun.QueryRowContext(ctx, fmt.Sprintf("%040x", have), t, t, t).Scan(&id); err != nil {
				b.Fatal(err)
			}
			// The seed run created series 1 to 600.
			for series := 1; series <= scaleBenchmarks*len(scaleUnits); series++ {
				for j := range vals {
					vals[j] = 1000 * (1 + 0.02*rng.NormFloat64())
				}
				if _, err := insSamples.ExecContext(ctx, series, id, scaleSamples, encodeValues(vals)); err != nil {
					b.Fatal(err)
				}
			}
			have++
		}
		insRun.Close()
		insSamples.Close()
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: built %d commits in %v", s.b.d.name, commits, time.Since(start).Round(time.Second))
}

// scaleRunText is one run of scaleBenchmarks benchmarks.
func scaleRunText(seed int) string {
	text := "pkg: example.com/scale\n"
	for n := range scaleBenchmarks {
		for i := range scaleSamples {
			text += fmt.Sprintf("BenchmarkScale%03d-8 1000 %d ns/op %d B/op %d allocs/op\n", n, 1000+seed+i, 64+n, n%5)
		}
	}
	return text
}

// processCPU returns the CPU time this process has used. On a shared
// machine wall time mostly measures the other processes; CPU time per read
// is what the code costs (the PostgreSQL server's share is not in it).
func processCPU(b *testing.B) time.Duration {
	d, err := cputime.Process()
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func scaleCommits(b *testing.B) int {
	if v := os.Getenv("PERFSCOPE_SCALE_COMMITS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			b.Fatalf("PERFSCOPE_SCALE_COMMITS=%q: want a number >= 2", v)
		}
		return n
	}
	return 500
}

// BenchmarkSeries reads one benchmark metric across every commit, as the
// trend page does, and reports the 95th percentile latency.
func BenchmarkSeries(b *testing.B) {
	commits := scaleCommits(b)
	for name, s := range scaleStores(b, commits) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(2, 2))
			var lat []time.Duration
			cpu0 := processCPU(b)
			for b.Loop() {
				key := SeriesKey{Package: "example.com/scale", Name: fmt.Sprintf("Scale%03d-8", rng.IntN(scaleBenchmarks)), Unit: scaleUnits[rng.IntN(3)]}
				t := time.Now()
				ps, err := s.Series(ctx, key, Filter{Branch: "main"})
				lat = append(lat, time.Since(t))
				if err != nil || len(ps) < commits {
					b.Fatalf("%v: %d points, %v", key, len(ps), err)
				}
			}
			cpu := processCPU(b) - cpu0
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
		})
	}
}

// BenchmarkSaveBenchRun ingests a 200-benchmark run (600 metrics, 6,000
// samples) into the large database.
func BenchmarkSaveBenchRun(b *testing.B) {
	for name, s := range scaleStores(b, scaleCommits(b)) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			results := parseBench(b, scaleRunText(7))
			i := 0
			for b.Loop() {
				i++
				run := BenchRun{Commit: fmt.Sprintf("ingest%d", i), Branch: "ingest", Machine: machineA, Results: results}
				if _, err := s.SaveBenchRun(ctx, run); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
