package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/scrape"
)

// WatchOptions configure Watch. Zero values mean the defaults.
type WatchOptions struct {
	// Command starts an example, as Options.Command.
	Command []string
	// Duration is how long the examples are scraped; default one minute.
	Duration time.Duration
	// Interval is the scrape interval; default 10s, the scraper's own.
	Interval time.Duration
	// Sink stores what is scraped (the profile-series store).
	Sink scrape.Sink
	Logf func(format string, args ...any)
}

// A Watched example is one service the watch demo scraped, with the label
// set its series carry.
type Watched struct {
	Job, Mode string
	// Selector chooses its series: {job="leftpad", mode="naive"}.
	Selector string
}

// WatchResult is what Watch scraped: the services, the range, and the
// targets' health when the scraper stopped.
type WatchResult struct {
	Services   []Watched
	From, To   time.Time
	Health     []scrape.Health
	ConfigPath string
}

// Watch runs continuous profiling on the bundled examples: it starts
// leftpad in both modes and txsummary in its naive mode on free loopback
// ports, sends each a steady load (its own traffic, as a live service
// has), and scrapes them all with the scraper and a configuration like a
// user's (every default profile type, labels job and mode) into o.Sink for
// o.Duration. The result names the series and the range, for queries.
func Watch(ctx context.Context, o WatchOptions) (*WatchResult, error) {
	if o.Duration <= 0 {
		o.Duration = time.Minute
	}
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if len(o.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the perfscope executable to run the examples: %w", err)
		}
		o.Command = Command(exe)
	}
	tmp, err := os.MkdirTemp("", "perfscope-watch-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	type started struct {
		w    Watched
		svc  *Service
		path string
	}
	var svcs []started
	defer func() {
		for _, s := range svcs {
			s.svc.Stop()
		}
	}()
	for _, ex := range []struct{ job, mode string }{{"leftpad", "naive"}, {"leftpad", "optimized"}, {"txsummary", "naive"}} {
		args := append(slices.Clone(o.Command[1:]), ex.job, "--mode", ex.mode, "--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0")
		switch ex.job {
		case "leftpad":
			args = append(args, "--log", filepath.Join(tmp, "access-"+ex.mode+".log"))
		case "txsummary":
			args = append(args, "--data", filepath.Join(tmp, "tx.json"))
		}
		svc, err := Start(ctx, o.Command[0], args...)
		if err != nil {
			return nil, fmt.Errorf("%s --mode %s: %w", ex.job, ex.mode, err)
		}
		w := Watched{Job: ex.job, Mode: ex.mode, Selector: fmt.Sprintf("{job=%q, mode=%q}", ex.job, ex.mode)}
		svcs = append(svcs, started{w: w, svc: svc, path: APIPath[ex.job]})
	}

	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global:\n  scrape_interval: %s\nscrape_configs:\n", o.Interval)
	for _, job := range []string{"leftpad", "txsummary"} {
		fmt.Fprintf(&cfg, "  - job_name: %s\n    static_configs:\n", job)
		for _, s := range svcs {
			if s.w.Job == job {
				fmt.Fprintf(&cfg, "      - targets: [%q]\n        labels: {mode: %q}\n", hostPort(s.svc.PprofURL), s.w.Mode)
			}
		}
	}
	res := &WatchResult{ConfigPath: filepath.Join(tmp, "scrape.yml")}
	if err := os.WriteFile(res.ConfigPath, []byte(cfg.String()), 0o644); err != nil {
		return nil, err
	}
	config, err := scrape.LoadConfig(res.ConfigPath)
	if err != nil {
		return nil, err
	}
	for _, s := range svcs {
		res.Services = append(res.Services, s.w)
	}

	wctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	done := make(chan error, len(svcs))
	for _, s := range svcs {
		go func() {
			_, err := loadgen.Run(wctx, loadgen.Config{URL: s.svc.URL + s.path, Concurrency: 2, Duration: o.Duration})
			done <- err
		}()
	}
	sc := scrape.New(config, o.Sink, scrape.Options{})
	o.Logf("scraping %d example services every %s for %s (leftpad naive and optimized, txsummary naive), each under a steady load", len(svcs), o.Interval, o.Duration)
	res.From = time.Now()
	runErr := make(chan error, 1)
	go func() { runErr <- sc.Run(wctx) }()
	<-wctx.Done()
	err = <-runErr
	res.Health = sc.Targets()
	res.To = time.Now()
	for range svcs {
		<-done
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, err
}

// hostPort is the host:port of a URL such as http://127.0.0.1:6060/debug/pprof/.
func hostPort(u string) string {
	u = strings.TrimPrefix(u, "http://")
	if i := strings.IndexByte(u, '/'); i >= 0 {
		u = u[:i]
	}
	return u
}
