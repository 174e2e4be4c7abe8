package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/perfscope/perfscope/expose"
	"github.com/perfscope/perfscope/internal/dashboard"
	"github.com/perfscope/perfscope/internal/report"
	"github.com/perfscope/perfscope/internal/scrape"
	"github.com/perfscope/perfscope/internal/store"
)

func init() { register(newScrapeCmd) }

func newScrapeCmd() *cobra.Command {
	var (
		sf         scrapeFlags
		db         string
		statusEach time.Duration
		pprofAddr  string
	)
	c := &cobra.Command{
		Use:   "scrape --config FILE",
		Short: "Profile live Go services all the time: scrape their pprof endpoints on an interval into the store",
		Long: `scrape collects profiles of live services continuously, as Prometheus
collects metrics: the configuration (YAML, Prometheus's style) lists the
targets, or files that list them (file_sd_configs, reread when they change),
their labels, which profiles to take, a bearer token file and TLS. Every
interval (default 10s) each target's CPU profile covers the interval; allocs,
mutex and block are stored as deltas over it; heap, goroutine (and
goroutineleak where the target serves it) as snapshots. Every scrape records
the process it came from: a restart or a new binary is never subtracted from
or merged with the old one silently.

Profiles go into the store (--db: a SQLite file, or PostgreSQL for several
scrapers and a shared dashboard): symbols and stacks once, samples as compact
blocks, kept whole for 3 days, then merged into 1-minute windows (to 15 days)
and 10-minute windows (to 60 days), within a disk budget (--disk-budget). Ask
them with 'perfscope query', or see them in 'perfscope serve'.

The whole configuration is checked at start (a mistake is one line naming the
file, the line and the key; exit 2) and reloaded on SIGHUP and whenever the
file changes; a reload that fails keeps the configuration running. Several
scrapers split the targets with --shard i/n (each keeps the targets whose
label hash modulo n is i) and write into one PostgreSQL. A status line is
printed every --status-every; Ctrl-C stops after the scrapes in flight.

Configuration:
  global:
    scrape_interval: 10s          # CPU windows and deltas this long (whole seconds)
    scrape_timeout: 10s           # for each answer, on top of its window
  scrape_configs:
    - job_name: leftpad
      profiles: [cpu, allocs, heap, goroutine, mutex, block]   # the default
      bearer_token_file: token.txt   # what perfscope's expose asks for off loopback
      tls_config: {ca_file: ca.pem}
      static_configs:
        - targets: ["127.0.0.1:6060"]
          labels: {service: "left pad", version: "1.4"}
      file_sd_configs:
        - files: ["targets/*.json"]`,
		Example: `  perfscope scrape --config scrape.yml --db scrape.db
  perfscope scrape --config scrape.yml --db postgres://perf:secret@db/perfscope --shard 0/2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if statusEach <= 0 {
				return usagef("--status-every %s: must be positive", statusEach)
			}
			ctx := cmd.Context()
			st, sc, err := sf.start(cmd, db)
			if err != nil {
				return err
			}
			defer st.Close()
			out := cmd.OutOrStdout()
			if pprofAddr != "" {
				// The scraper's own profiles, as perfscope's expose serves a service's.
				srv, err := expose.Start(ctx, expose.Options{Addr: pprofAddr})
				if err != nil {
					return usagef("--pprof %s: %v", pprofAddr, err)
				}
				defer srv.Close()
				fmt.Fprintf(out, "the scraper's own profiles: %s\n", srv.URL())
			}
			fmt.Fprintf(out, "scraping %s into %s\n", sf.describe(), describeDB(db))
			done := make(chan error, 1)
			go func() { done <- sc.Run(ctx) }()
			tick := time.NewTicker(statusEach)
			defer tick.Stop()
			// The last health seen: once stopped, the scraper has no
			// targets left to report.
			var last []scrape.Health
			for {
				select {
				case err := <-done:
					if hs := sc.Targets(); len(hs) > 0 {
						last = hs
					}
					_ = report.WriteScrapeStatus(out, last, true)
					return err
				case <-tick.C:
					last = sc.Targets()
					_ = report.WriteScrapeStatus(out, last, false)
				}
			}
		},
	}
	f := c.Flags()
	sf.register(f, "config", "the scrape configuration (YAML; see above)")
	f.StringVar(&db, "db", "", "the store: a SQLite file or a postgres://user:pass@host/db URL (default ~/.perfscope/perfscope.db)")
	f.DurationVar(&statusEach, "status-every", time.Minute, "print the targets' health this often")
	f.StringVar(&pprofAddr, "pprof", "", "serve the scraper's own pprof endpoints on this loopback host:port (port 0: any free one)")
	return c
}

// scrapeFlags are the flags of a scraper, run alone or inside the
// dashboard.
type scrapeFlags struct {
	config     string
	configFlag string
	shard      string
	budgetGB   float64
	sh         scrape.Shard
}

// register adds the flags, the configuration's as configFlag.
func (f *scrapeFlags) register(fs *pflag.FlagSet, configFlag, configUsage string) {
	f.configFlag = configFlag
	fs.StringVar(&f.config, configFlag, "", configUsage)
	fs.StringVar(&f.shard, "shard", "", "scrape only shard i of n of the targets (i/n, as 0/2 and 1/2 for two scrapers)")
	fs.Float64Var(&f.budgetGB, "disk-budget", float64(store.DefaultRetention.Budget)/(1<<30), "the most GiB the stored profiles may take; the oldest are dropped beyond it")
}

func (f *scrapeFlags) describe() string {
	s := f.config
	if f.shard != "" {
		s += " (shard " + f.shard + ")"
	}
	return s
}

// start validates the flags and the configuration, opens the store for
// writing, and returns a scraper of it that reloads on SIGHUP and when the
// file changes, and applies retention, both for as long as cmd's context
// lives.
func (f *scrapeFlags) start(cmd *cobra.Command, db string) (*store.DB, *scrape.Scraper, error) {
	if f.config == "" {
		return nil, nil, usagef("give the scrape configuration with --%s FILE (see perfscope scrape --help)", f.configFlag)
	}
	if f.shard != "" {
		sh, err := scrape.ParseShard(f.shard)
		if err != nil {
			return nil, nil, usagef("--shard %s: %v", f.shard, err)
		}
		f.sh = sh
	}
	if f.budgetGB <= 0 {
		return nil, nil, usagef("--disk-budget %g: give GiB, more than 0", f.budgetGB)
	}
	cfg, err := scrape.LoadConfig(f.config)
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	ctx := cmd.Context()
	st, err := openServerStore(cmd, db, false)
	if err != nil {
		return nil, nil, err
	}
	st.Retention.Budget = int64(f.budgetGB * (1 << 30))
	sc := scrape.New(cfg, st, scrape.Options{Shard: f.sh})
	logf := func(format string, args ...any) {
		fmt.Fprintf(cmd.ErrOrStderr(), "perfscope scrape: "+format+"\n", args...)
	}
	reload := func() error { return sc.Reload(f.config) }
	report := func(err error) {
		if err != nil {
			logf("%v (still scraping by the configuration before it)", err)
			return
		}
		logf("reloaded %s", f.config)
	}
	go scrape.WatchFile(ctx, f.config, 0, reload, report)
	go onReloadSignal(ctx, func() { report(reload()) })
	go keepRetention(ctx, st, logf)
	return st, sc, nil
}

// retentionEvery is how often the scraper applies retention; between,
// it makes the rollups of what ended every rollUpEvery.
const retentionEvery, rollUpEvery = 10 * time.Minute, time.Minute

// keepRetention applies the store's retention now and every
// retentionEvery, then judges the deploys the home page lists (the store
// keeps each judgement once its deploy has settled), and makes its
// rollups every rollUpEvery between, until ctx is done.
func keepRetention(ctx context.Context, st *store.DB, logf func(string, ...any)) {
	tick := time.NewTicker(rollUpEvery)
	defer tick.Stop()
	var last time.Time
	for {
		var err error
		if now := time.Now(); now.Sub(last) >= retentionEvery {
			_, err = st.ApplyRetention(ctx, now)
			if err == nil {
				_, err = dashboard.HomeDeploys(ctx, st, now)
			}
			last = now
		} else {
			_, err = st.RollUp(ctx, now)
		}
		if err != nil && ctx.Err() == nil {
			logf("retention: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// onReloadSignal calls reload on each SIGHUP (where the system has one)
// until ctx is done.
func onReloadSignal(ctx context.Context, reload func()) {
	sig := make(chan os.Signal, 1)
	if !notifyReload(sig) {
		return
	}
	defer signal.Stop(sig)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
			reload()
		}
	}
}
