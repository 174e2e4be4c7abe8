package scrape

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// A Target is one pprof endpoint to scrape and the labels its profiles
// are stored under.
type Target struct {
	// Labels name the target: job, instance and the labels of its
	// group, exactly as written.
	Labels profseries.Labels
	// Address is the target's host:port.
	Address string
	// Job is the job the target belongs to.
	Job *Job
}

// URL is the target's pprof base URL: scheme://address/pprof_path.
func (t Target) URL() string { return t.Job.Scheme + "://" + t.Address + t.Job.PprofPath }

// Hash is a number from the target's label set alone, the same in every
// scraper and every run: the first 8 bytes, big-endian, of the SHA-256
// of the label set as Labels.String writes it ({instance="h:1",
// job="api"}). Sharding and the scrape offset come from it.
func (t Target) Hash() uint64 {
	sum := sha256.Sum256([]byte(t.Labels.String()))
	return binary.BigEndian.Uint64(sum[:8])
}

// Offset is where in each interval the target's scrapes are due: its
// hash modulo the interval, so targets spread over the interval, and a
// target keeps its place across restarts and reloads.
func (t Target) Offset() time.Duration {
	return time.Duration(t.Hash() % uint64(t.Job.ScrapeInterval))
}

// key identifies a target and how it is scraped: a reload that keeps it
// keeps its scrape state (baselines, health); one that changes how it is
// scraped starts it anew.
func (t Target) key() string {
	j := t.Job
	return fmt.Sprintf("%s %s %s %s %v %s %x %+v", t.Labels, t.URL(), j.ScrapeInterval, j.ScrapeTimeout,
		j.Profiles, j.BearerTokenFile, sha256.Sum256([]byte(j.Token)), j.TLSConfig)
}

// A Shard is one of N scrapers sharing the targets: it keeps the targets
// whose Hash modulo N is I, as Prometheus's hashmod relabelling does, so
// N scrapers started with 0/N … N-1/N split every configuration's
// targets with none scraped twice and none left out. The zero Shard
// keeps every target.
type Shard struct {
	I, N int
}

// ParseShard reads a shard written i/n, 0 ≤ i < n.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/n with 0 ≤ i < n, such as 0/2 and 1/2 for two scrapers", s)
	}
	return Shard{I: i, N: n}, nil
}

// Keeps reports whether the shard scrapes t.
func (s Shard) Keeps(t Target) bool {
	return s.N <= 1 || t.Hash()%uint64(s.N) == uint64(s.I)
}

// groupTargets returns the targets of a group of job j, with job and
// instance labels unless the group sets them.
func groupTargets(j *Job, g *StaticConfig) []Target {
	var ts []Target
	for _, addr := range g.Targets {
		m := map[string]string{"job": j.JobName, "instance": addr}
		for n, v := range g.Labels {
			m[n] = v
		}
		ts = append(ts, Target{Labels: profseries.NewLabels(m), Address: addr, Job: j})
	}
	return ts
}
