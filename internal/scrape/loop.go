package scrape

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/profseries"
)

// Health is how scraping one target goes, as the dashboard and the CLI
// show it.
type Health struct {
	Labels profseries.Labels `json:"labels"`
	Job    string            `json:"job"`
	// URL is the target's pprof base URL, redacted.
	URL string `json:"url"`
	// Up says the last scrape collected at least one profile.
	Up bool `json:"up"`
	// LastError is why the last scrape missed a profile, one line
	// ("heap: 401 Unauthorized"), "" when it missed none; Errors has
	// every profile it missed.
	LastError string      `json:"last_error"`
	Errors    []TypeError `json:"errors,omitempty"`
	// LastScrape is when the last scrape started, LastSuccess when the
	// last one that collected something did; LastDuration is how long
	// the last scrape took (a CPU profile's window included).
	LastScrape   time.Time     `json:"last_scrape"`
	LastSuccess  time.Time     `json:"last_success"`
	LastDuration time.Duration `json:"last_duration_ns"`
	// Scrapes counts the scrapes started; Failures those that missed at
	// least one profile; ConsecutiveFailures those in a row that
	// collected nothing, which set the backoff.
	Scrapes             int64 `json:"scrapes"`
	Failures            int64 `json:"failures"`
	ConsecutiveFailures int   `json:"consecutive_failures"`
	// Collected counts the profiles the sink stored. Dropped counts
	// those collected but never handed to it because the store was
	// behind (its queue full): each shows in LastError too, as a
	// profile the sink refused does, with the scrape after.
	Collected int64 `json:"collected"`
	Dropped   int64 `json:"dropped"`
	// NextDue is when the next scrape is due.
	NextDue time.Time `json:"next_due"`
	// Lateness is how long after it was due the last scrape started;
	// MaxLateness the most over the target's life. Missed counts the
	// scrapes never started because the one before ran past their due
	// time (a scrape due is started at most once, never in a burst).
	// Scrapes skipped in backoff are not missed.
	Lateness    time.Duration `json:"lateness_ns"`
	MaxLateness time.Duration `json:"max_lateness_ns"`
	Missed      int64         `json:"missed"`
	// Backoff is the wait after the failures in a row, 0 when none.
	Backoff time.Duration `json:"backoff_ns"`
	// Generation counts the target's restarts seen; BuildID is its main
	// binary's build id, when the profiles carry it.
	Generation int    `json:"generation"`
	BuildID    string `json:"build_id,omitempty"`
	// Deltas says how each cumulative profile type's deltas are made:
	// "target" (?seconds=), "subtracted" (two snapshots), or absent
	// until the first scrape finds out.
	Deltas map[string]string `json:"deltas,omitempty"`
	// Unsupported lists the profile types the target does not serve
	// (goroutineleak on most Go versions); they are asked again after a
	// restart.
	Unsupported []string `json:"unsupported,omitempty"`
}

// A TypeError is why one profile type of a scrape was missed.
type TypeError struct {
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

// A loop scrapes one target, one scrape at a time.
type loop struct {
	s        *Scraper
	target   Target
	client   *http.Client
	ep       *fetch.Endpoint
	interval time.Duration
	offset   time.Duration
	cancel   context.CancelFunc
	ctx      context.Context

	mu sync.Mutex
	h  Health
	// storeErrs are why the sink refused profiles since the last
	// scrape's health was written: they join the next one's errors.
	storeErrs []TypeError

	st collector // owned by the loop's goroutine
}

func newLoop(s *Scraper, t Target, c *http.Client) (*loop, error) {
	ep, err := fetch.NewEndpoint(t.URL(), fetch.EndpointOptions{
		Client:  c,
		Token:   t.Job.Token,
		Timeout: time.Duration(t.Job.ScrapeTimeout),
		Limits:  s.opts.Limits,
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(s.ctx)
	l := &loop{
		s: s, target: t, client: c, ep: ep,
		interval: time.Duration(t.Job.ScrapeInterval),
		offset:   t.Offset(),
		ctx:      ctx, cancel: cancel,
		h: Health{Labels: t.Labels, Job: t.Job.JobName, URL: ep.Base(), Deltas: map[string]string{}},
	}
	l.st = newCollector(l)
	return l, nil
}

func (l *loop) health() Health {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.h
	h.Errors = slices.Clone(h.Errors)
	h.Unsupported = slices.Clone(h.Unsupported)
	h.Deltas = make(map[string]string, len(l.h.Deltas))
	for k, v := range l.h.Deltas {
		h.Deltas[k] = v
	}
	return h
}

// slotAtOrAfter is the first time at or after t when a scrape is due:
// offset + k × interval from the Unix epoch, so every scraper agrees.
func (l *loop) slotAtOrAfter(t time.Time) time.Time {
	iv, off := l.interval.Nanoseconds(), l.offset.Nanoseconds()
	n := t.UnixNano() - off
	k := n / iv
	if k*iv < n {
		k++
	}
	return time.Unix(0, k*iv+off)
}

// run scrapes the target at its due times until ctx is done.
func (l *loop) run() {
	ctx := l.ctx
	due := l.slotAtOrAfter(time.Now())
	for {
		l.mu.Lock()
		l.h.NextDue = due
		l.mu.Unlock()
		if !sleepUntil(ctx, due) {
			return
		}
		start := time.Now()
		late := start.Sub(due)
		if late >= l.interval {
			// The scrape before ran past this one's time: start the
			// latest due instead, and count those missed.
			skipped := int64(late / l.interval)
			due = due.Add(time.Duration(skipped) * l.interval)
			late = start.Sub(due)
			l.mu.Lock()
			l.h.Missed += skipped
			l.mu.Unlock()
		}
		// A window of whole seconds that ends by the next due time, so
		// that a scrape a little late (its CPU profile waited for the
		// one before to end) puts the next back on time.
		window := l.interval - late.Truncate(time.Second)
		if window < time.Second {
			l.mu.Lock()
			l.h.Missed++
			l.mu.Unlock()
			due = due.Add(l.interval)
			continue
		}
		got, errs := l.st.scrape(ctx, start, window)
		if ctx.Err() != nil {
			return
		}
		end := time.Now()
		next := due.Add(l.interval)
		l.mu.Lock()
		h := &l.h
		h.Scrapes++
		h.LastScrape, h.LastDuration, h.Lateness = start, end.Sub(start), late
		h.MaxLateness = max(h.MaxLateness, late)
		errs = append(errs, l.storeErrs...)
		l.storeErrs = nil
		h.Errors = errs
		h.LastError = ""
		if len(errs) > 0 {
			h.Failures++
			h.LastError = errs[0].Type + ": " + errs[0].Reason
		}
		h.Up = got > 0
		if got > 0 {
			h.LastSuccess = start
			h.ConsecutiveFailures, h.Backoff = 0, 0
		} else {
			h.ConsecutiveFailures++
			h.Backoff = l.backoff(h.ConsecutiveFailures)
			next = l.slotAtOrAfter(start.Add(h.Backoff))
		}
		l.mu.Unlock()
		due = next
	}
}

// backoff is the wait after n scrapes in a row that collected nothing:
// the interval, doubled for each failure after the first, capped at
// MaxBackoff (or the interval, when that is longer).
func (l *loop) backoff(n int) time.Duration {
	limit := max(l.s.opts.MaxBackoff, l.interval)
	b := l.interval
	for i := 1; i < n && b < limit; i++ {
		b *= 2
	}
	return min(b, limit)
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
