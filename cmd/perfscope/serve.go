package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/scrape"
	"github.com/perfscope/perfscope/internal/server"
	"github.com/perfscope/perfscope/internal/store"
)

func init() { register(newServeCmd) }

func newServeCmd() *cobra.Command {
	var (
		addr, db, data string
		sourceDir      string
		publicRead     bool
		maxUploadMB    int64
		maxProfileMB   int64 = fetch.DefaultMaxBytes >> 20
		timeout              = server.DefaultRequestTimeout
		sf             scrapeFlags
	)
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the dashboard: benchmark trends per commit, runs, flame graphs, comparisons",
		Long: `serve runs perfscope's web dashboard and its HTTP API on one address.

Pages (state in the URL, so every view is a shareable link):
  /             what changed: the latest commits' changes, regressions first,
                and the latest runs with their health and numbers per request
  /benchmarks   every recorded benchmark with each metric's latest value and a
                sparkline; filter by branch, machine, package
  /trend        one benchmark metric over commits: median, 95% confidence band,
                marked change points linked to the comparison of the two commits
  /runs         profiling runs; /runs/ID shows load results, findings, CPU by
                route, the report, and each profile in pprof's own web UI
                (flame graph, top, source, peek) under /runs/ID/pprof/KIND/
  /compare      two commits (benchstat tables) or two runs (side by side, with
                diff flame graphs under /diff/BASE/HEAD/KIND/)

API (JSON; errors are {"error": "...", "status": N}):
  POST /api/v1/bench           upload Go benchmark output; query: commit (or a
                               'commit:' line), branch, dirty, commit_time, time,
                               machine, goos, goarch, cpu, go, package
  POST /api/v1/runs            upload a run directory (multipart/form-data, one
                               part per file, or a tar.gz body)
  GET  /api/v1/commits         query: branch, machine, since, limit, order
  GET  /api/v1/commits/REF     every sample of one commit; query: branch, machine,
                               package, name (regexps), unit
  GET  /api/v1/benchmarks      query: branch, machine, package, name, unit
  GET  /api/v1/series          one metric per commit with medians, CIs and change
                               points; query: package, name, unit (required),
                               branch, machine, since, limit, order, alpha
  GET  /api/v1/compare         benchstat comparison; query: base, head (required),
                               branch, machine, package, name, unit, alpha,
                               format (json, text, markdown)
  GET  /api/v1/runs            profiling runs, newest first; query: since, limit
  GET  /api/v1/runs/ID         the run's run.json
  DELETE /api/v1/runs/ID       delete the run (token needed), as 'perfscope runs rm'
  GET  /api/v1/runs/ID/report  query: format (json, markdown, text), route, top, all
  GET  /api/v1/runs/ID/profiles/KIND   the profile as .pb.gz:
                               go tool pprof http://HOST/api/v1/runs/ID/profiles/cpu
  GET  /api/v1/profiles/targets  the profile series 'perfscope scrape' stored;
                               query: query (a selector), type
  GET  /api/v1/profiles/merge  one type merged over a range, as .pb.gz (sums
                               of the scrapes: heap and goroutine snapshots add
                               up); query: query, type (default cpu), since,
                               from, to
  GET  /api/v1/profiles/top    the top functions; as merge, and n, order
                               (flat, cum), sample_type
  GET  /api/v1/profiles/function  one function's share per step; as merge, and
                               name (required), step
  GET  /api/v1/profiles/diff   a range against a base range, in shares; as
                               merge, and ago or base_from and base_to
  GET  /api/v1/profiles/findings  the range's report and findings; query,
                               since, from, to, format (json, markdown, text)
  GET  /api/v1/scrape/targets  the health of the targets of --scrape's scraper
  GET  /metrics                Prometheus metrics of the server itself

Access: uploads need a token (create one with 'perfscope token create' against
the same --db), sent as "Authorization: Bearer TOKEN" or as the password of
Basic authentication (a browser prompt, or http://any:TOKEN@HOST/... for go
tool pprof). Reads are open to clients on loopback; others need a token unless
--public-read. Requests through a proxy (X-Forwarded-For) count as remote.
Uploads larger than --max-upload get 413, and so do runs whose files inflate
beyond it, a run.json over 1 MB, and profiles beyond --max-profile-size
inflated (or beyond 1,000,000 samples or locations, or 512 MB of memory once
parsed, together per run); malformed uploads get 400 with the reason. An
upload is acknowledged only after it is on disk and committed to the store.
Each run is analysed once, in the background after its upload, a few runs at
a time; pages use that analysis and never start one per visitor.

Source: findings and pprof's source view show lines only of files inside
--source-dir (none without it), never a file at a path an uploaded profile
names; uploaded profiles' build paths are mapped into it by their trailing
elements.`,
		Example: `  perfscope serve
  perfscope serve --addr :7070 --db postgres://perf:secret@db/perfscope --data /srv/perfscope-runs
  perfscope serve --scrape scrape.yml --db scrape.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxUploadMB < 1 {
				return usagef("--max-upload %d: give megabytes, 1 or more", maxUploadMB)
			}
			if maxProfileMB < 1 {
				return usagef("--max-profile-size %d: give megabytes, 1 or more", maxProfileMB)
			}
			if timeout <= 0 {
				return usagef("--timeout %s: must be positive", timeout)
			}
			if data == "" {
				home, err := os.UserHomeDir()
				if err != nil {
					return usagef("no home directory for the default --data: pass --data DIR (%v)", err)
				}
				data = filepath.Join(home, ".perfscope", "server-runs")
			}
			ctx := cmd.Context()
			var (
				st  *store.DB
				sc  *scrape.Scraper
				err error
			)
			if sf.config != "" {
				st, sc, err = sf.start(cmd, db)
			} else {
				st, err = openServerStore(cmd, db, false)
			}
			if err != nil {
				return err
			}
			defer st.Close()
			cfg := server.Config{
				Store:          st,
				DataDir:        data,
				PublicRead:     publicRead,
				MaxUpload:      maxUploadMB << 20,
				RequestTimeout: timeout,
				SourceDir:      sourceDir,
				ProfileLimits:  fetch.Limits{MaxBytes: maxProfileMB << 20},
				Version:        perfscopeVersion(),
				Logf: func(format string, args ...any) {
					fmt.Fprintf(cmd.ErrOrStderr(), "perfscope serve: "+format+"\n", args...)
				},
			}
			if sc != nil {
				cfg.Scraper = sc
				go func() {
					if err := sc.Run(ctx); err != nil {
						cfg.Logf("scraper: %v", err)
					}
				}()
			}
			srv, err := server.New(cfg)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w (is another server using the port? choose one with --addr)", addr, err)
			}
			url := "http://" + ln.Addr().String()
			if host, port, _ := net.SplitHostPort(ln.Addr().String()); host == "::" || host == "0.0.0.0" {
				url = "http://localhost:" + port
			}
			fmt.Fprintf(cmd.OutOrStdout(), "perfscope dashboard on %s (store %s, runs in %s)\n", url, describeDB(db), data)
			if sc != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "scraping %s into the same store\n", sf.describe())
			}
			if tokens, err := st.Tokens(ctx); err == nil && len(tokens) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no API tokens yet: uploads need one ('perfscope token create --db %s')\n", describeDB(db))
			}
			if !isLoopbackAddr(ln.Addr()) && !publicRead {
				fmt.Fprintln(cmd.OutOrStdout(), "remote clients need a token to read and write ('perfscope token create'); --public-read opens reading")
			}
			return srv.Serve(ctx, ln)
		},
	}
	f := c.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:7070", "listen address (HOST:PORT; :7070 for all interfaces)")
	f.StringVar(&db, "db", "", "the store: a SQLite file or a postgres://user:pass@host/db URL (default ~/.perfscope/perfscope.db)")
	f.StringVar(&data, "data", "", "directory for uploaded runs (default ~/.perfscope/server-runs); servers sharing one\n"+
		"PostgreSQL database must share it too, since the database indexes runs by their directory")
	f.BoolVar(&publicRead, "public-read", false, "let clients that are not on loopback read without a token")
	f.Int64Var(&maxUploadMB, "max-upload", server.DefaultMaxUpload>>20, "largest upload accepted, in MB")
	f.DurationVar(&timeout, "timeout", timeout, "longest time one request may take")
	f.Int64Var(&maxProfileMB, "max-profile-size", maxProfileMB, "largest profile read, in MB once inflated")
	sf.register(f, "scrape", "also scrape the targets of this configuration (as 'perfscope scrape --config') into the store the dashboard reads")
	f.StringVar(&sourceDir, "source-dir", "", "the only directory whose source files pages show, and the module built for the compiler's reasons (default: no source shown; reasons from the current module)")
	return c
}

func isLoopbackAddr(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
