// Command serve measures the dashboard server against its performance goal:
// with 5,000 commits × 200 benchmarks × 3 units × 10 samples stored, one
// benchmark's trend page (store read, change detection and rendering) answers
// in under 100 ms at the 95th percentile, on SQLite and on PostgreSQL, and a
// 200-benchmark result file is ingested in under a second.
//
//	go run ./bench/serve                       # SQLite in /tmp/perfscope-bench-serve.db
//	go run ./bench/serve -pg "$(bash scripts/start-postgres.sh | tail -n 1)"
//
// The data set is built on the first run (minutes: every commit goes through
// the store's ordinary SaveBenchRun) and reused afterwards. Requests go over
// HTTP on loopback to a server in this process, each for a different
// benchmark metric, so no answer comes from the server's cache; the warm
// numbers repeat one metric to show the cache.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/perf/benchfmt"

	"github.com/perfscope/perfscope/internal/cputime"
	"github.com/perfscope/perfscope/internal/server"
	"github.com/perfscope/perfscope/internal/store"
)

const (
	benchmarks = 200
	samples    = 10
	pkg        = "example.com/scale"
)

var units = []string{"sec/op", "B/op", "allocs/op"}

func main() {
	var (
		dbPath   = flag.String("db", "/tmp/perfscope-bench-serve.db", "SQLite file holding (or to hold) the data set")
		pgDSN    = flag.String("pg", "", "PostgreSQL DSN: measure PostgreSQL (schema perfscope_bench_serve) instead of SQLite")
		commits  = flag.Int("commits", 5000, "commits in the data set")
		requests = flag.Int("requests", 200, "trend requests per measurement")
		ingests  = flag.Int("ingests", 20, "200-benchmark uploads to time")
		cpuprof  = flag.String("cpuprofile", "", "write a CPU profile of the measurements (server included) to this file")
	)
	flag.Parse()
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench/serve:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench/serve:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*dbPath, *pgDSN, *commits, *requests, *ingests); err != nil {
		fmt.Fprintln(os.Stderr, "bench/serve:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(dbPath, pgDSN string, commits, requests, ingests int) error {
	ctx := context.Background()
	dsn, engine := dbPath, "sqlite"
	if pgDSN != "" {
		var err error
		if dsn, err = pgSchema(ctx, pgDSN, "perfscope_bench_serve"); err != nil {
			return err
		}
		engine = "postgres"
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := fill(ctx, st, commits); err != nil {
		return err
	}
	data, err := os.MkdirTemp("", "perfscope-bench-serve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)
	srv, err := server.New(server.Config{Store: st, DataDir: data})
	if err != nil {
		return err
	}
	token, _, err := st.CreateToken(ctx, "bench-serve")
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	defer func() { stop(); <-done }()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: time.Minute}

	fmt.Printf("%s, %d commits × %d benchmarks × %d units × %d samples\n", engine, commits, benchmarks, len(units), samples)
	fmt.Printf("%-44s %6s %9s %9s %9s %12s\n", "request", "n", "p50 ms", "p95 ms", "max ms", "cpu ms/req")
	rng := rand.New(rand.NewPCG(7, 7))
	metrics := rng.Perm(benchmarks * len(units))
	pick := func(i int) (string, string) {
		m := metrics[i%len(metrics)]
		return fmt.Sprintf("Scale%03d-8", m/len(units)), units[m%len(units)]
	}
	type measurement struct {
		name string
		path func(i int) string
	}
	// Warm up the database's page cache and the server's code paths on
	// metrics the measurements below do not ask for.
	offset := 0
	for i := range 20 {
		name, unit := pick(len(metrics) - 1 - i)
		if err := get(client, base+"/trend?"+url.Values{"package": {pkg}, "name": {name}, "unit": {unit}, "branch": {"main"}, "n": {"all"}}.Encode()); err != nil {
			return err
		}
	}
	for _, m := range []measurement{
		{"GET /trend (latest 1000 commits, cold)", func(i int) string {
			name, unit := pick(i)
			return "/trend?" + url.Values{"package": {pkg}, "name": {name}, "unit": {unit}, "branch": {"main"}}.Encode()
		}},
		{"GET /trend?n=all (5000 commits, cold)", func(i int) string {
			name, unit := pick(i)
			return "/trend?" + url.Values{"package": {pkg}, "name": {name}, "unit": {unit}, "branch": {"main"}, "n": {"all"}}.Encode()
		}},
		{"GET /api/v1/series (all commits, cold)", func(i int) string {
			name, unit := pick(i)
			return "/api/v1/series?" + url.Values{"package": {pkg}, "name": {name}, "unit": {unit}, "branch": {"main"}}.Encode()
		}},
		{"GET /trend?n=all (one metric, warm)", func(int) string {
			return "/trend?" + url.Values{"package": {pkg}, "name": {"Scale000-8"}, "unit": {"sec/op"}, "branch": {"main"}, "n": {"all"}}.Encode()
		}},
	} {
		var lat []time.Duration
		cpu0 := cpuTime()
		for i := range requests {
			path := m.path(offset + i)
			t0 := time.Now()
			if err := get(client, base+path); err != nil {
				return err
			}
			lat = append(lat, time.Since(t0))
		}
		offset += requests
		report(m.name, lat, cpuTime()-cpu0)
	}

	text := resultText(1)
	var lat []time.Duration
	cpu0 := cpuTime()
	for i := range ingests {
		q := url.Values{"commit": {fmt.Sprintf("ingest%08d%d", i, time.Now().UnixNano())}, "branch": {"ingest"}, "machine": {"bench"}}
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/bench?"+q.Encode(), strings.NewReader(text))
		req.Header.Set("Authorization", "Bearer "+token)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(t0))
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("ingest: %s: %s", resp.Status, body)
		}
	}
	report(fmt.Sprintf("POST /api/v1/bench (%d benchmarks, %d KiB)", benchmarks, len(text)>>10), lat, cpuTime()-cpu0)
	return nil
}

func get(c *http.Client, u string) error {
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return nil
}

// report prints the latency percentiles of one measurement and the CPU
// this process (client and server) used per request: on a machine shared
// with other work, latency tails measure the neighbours too, CPU time much
// less. PostgreSQL's own CPU is not in it.
func report(name string, lat []time.Duration, cpu time.Duration) {
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	fmt.Printf("%-44s %6d %9.1f %9.1f %9.1f %12.1f\n", name, len(lat), q(0.5), q(0.95), float64(lat[len(lat)-1].Microseconds())/1000,
		float64(cpu.Microseconds())/1000/float64(len(lat)))
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime() time.Duration {
	d, _ := cputime.Process()
	return d
}

// resultText is one run of every benchmark in Go benchmark format.
func resultText(seed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "goos: linux\ngoarch: amd64\npkg: %s\n", pkg)
	for n := range benchmarks {
		for i := range samples {
			fmt.Fprintf(&b, "BenchmarkScale%03d-8 1000 %d ns/op %d B/op %d allocs/op\n", n, 1000+seed+i, 64+n, n%5)
		}
	}
	return b.String()
}

// fill adds commits on branch main until the store holds want of them.
// Times are noisy around a level that steps up or down every few hundred
// commits, so change detection has real work to do.
func fill(ctx context.Context, b server.Backend, want int) error {
	have, err := b.Commits(ctx, store.Filter{Branch: "main"})
	if err != nil {
		return err
	}
	if len(have) >= want {
		return nil
	}
	fmt.Printf("building the data set: %d of %d commits present\n", len(have), want)
	start := time.Now()
	rng := rand.New(rand.NewPCG(1, uint64(len(have))))
	level := make([]float64, benchmarks)
	for i := range level {
		level[i] = 1000 * (1 + float64(i%17))
	}
	epoch := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	machine := store.Machine{Hostname: "builder", GOOS: "linux", GOARCH: "amd64", CPU: "bench"}
	for c := len(have); c < want; c++ {
		var results []*benchfmt.Result
		for n := range benchmarks {
			if rng.IntN(400) == 0 {
				level[n] *= 1 + 0.2*(rng.Float64()-0.5)
			}
			for range samples {
				r := &benchfmt.Result{Name: benchfmt.Name(fmt.Sprintf("Scale%03d-8", n)), Iters: 1000}
				r.Values = []benchfmt.Value{
					{Value: level[n] * (1 + 0.02*rng.NormFloat64()) * 1e-9, Unit: "sec/op", OrigValue: level[n], OrigUnit: "ns/op"},
					{Value: float64(64 + n + 8*(c/1000)), Unit: "B/op"},
					{Value: float64(n % 5), Unit: "allocs/op"},
				}
				results = append(results, r)
			}
		}
		t := epoch.Add(time.Duration(c) * time.Hour)
		_, err := b.SaveBenchRun(ctx, store.BenchRun{Commit: fmt.Sprintf("%040x", c+1), Branch: "main", CommitTime: t, Time: t,
			Machine: machine, GoVersion: "go1.26", Package: pkg, Results: results})
		if err != nil {
			return err
		}
		if (c+1)%500 == 0 {
			fmt.Printf("  %d commits (%s)\n", c+1, time.Since(start).Round(time.Second))
		}
	}
	return nil
}

// pgSchema creates schema in the database dsn names, if needed, and returns
// a DSN that selects it.
func pgSchema(ctx context.Context, dsn, schema string) (string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema); err != nil {
		return "", fmt.Errorf("create schema %s: %w", schema, err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
