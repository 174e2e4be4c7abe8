// Package httpmetrics keeps an HTTP server's own measurements — requests by
// route and status, their durations, uploads by kind and outcome — and
// writes them in Prometheus' text exposition format (version 0.0.4).
// Written by hand: a handful of counters and one histogram do not justify
// a client library.
package httpmetrics

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Registry holds the measurements. Its methods are safe for concurrent
// use.
type Registry struct {
	start time.Time

	mu        sync.Mutex
	requests  map[routeStatus]int64
	durations map[string]*histogram // by route
	uploads   map[uploadKey]int64
	upBytes   map[string]int64 // accepted upload bytes by kind
}

type routeStatus struct {
	method, route string
	code          int
}

type uploadKey struct{ kind, outcome string }

// durationBuckets are the upper bounds of the request duration histogram,
// in seconds: the dashboard's pages aim under 0.1 s.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// UploadKinds are the kinds of upload whose accepted bytes are always
// written, zero included, so a scraper sees the series from the start.
var UploadKinds = []string{"bench", "run"}

type histogram struct {
	counts []int64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      int64
}

// New returns an empty registry whose start time is now.
func New() *Registry {
	return &Registry{
		start:     time.Now(),
		requests:  make(map[routeStatus]int64),
		durations: make(map[string]*histogram),
		uploads:   make(map[uploadKey]int64),
		upBytes:   make(map[string]int64),
	}
}

// Observe counts one request answered with code on route (a pattern, not
// a path, so the number of series stays bounded) and how long it took.
func (m *Registry) Observe(method, route string, code int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[routeStatus{method, route, code}]++
	h := m.durations[route]
	if h == nil {
		h = &histogram{counts: make([]int64, len(durationBuckets)+1)}
		m.durations[route] = h
	}
	sec := d.Seconds()
	i := sort.SearchFloat64s(durationBuckets, sec)
	h.counts[i]++
	h.sum += sec
	h.n++
}

// Upload counts one upload of kind ("bench" or "run") with its outcome
// ("ok", "bad_request", "too_large", "conflict", "error") and, when
// accepted, its size.
func (m *Registry) Upload(kind, outcome string, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.uploads[uploadKey{kind, outcome}]++
	if outcome == "ok" {
		m.upBytes[kind] += bytes
	}
}

// ServeHTTP answers with the measurements in the exposition format.
func (m *Registry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	var b strings.Builder
	m.WriteTo(&b)
	_, _ = io.WriteString(w, b.String())
}

// WriteTo writes the measurements in the exposition format.
func (m *Registry) WriteTo(w io.Writer) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder

	b.WriteString("# HELP perfscope_http_requests_total HTTP requests answered, by route pattern and status code.\n")
	b.WriteString("# TYPE perfscope_http_requests_total counter\n")
	keys := make([]routeStatus, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b routeStatus) int {
		if c := strings.Compare(a.route, b.route); c != 0 {
			return c
		}
		if c := strings.Compare(a.method, b.method); c != 0 {
			return c
		}
		return a.code - b.code
	})
	for _, k := range keys {
		fmt.Fprintf(&b, "perfscope_http_requests_total{method=%s,route=%s,code=\"%d\"} %d\n", quote(k.method), quote(k.route), k.code, m.requests[k])
	}

	b.WriteString("# HELP perfscope_http_request_duration_seconds Time to answer HTTP requests, by route pattern.\n")
	b.WriteString("# TYPE perfscope_http_request_duration_seconds histogram\n")
	routes := make([]string, 0, len(m.durations))
	for r := range m.durations {
		routes = append(routes, r)
	}
	slices.Sort(routes)
	for _, route := range routes {
		h := m.durations[route]
		var cum int64
		for i, le := range durationBuckets {
			cum += h.counts[i]
			fmt.Fprintf(&b, "perfscope_http_request_duration_seconds_bucket{route=%s,le=\"%s\"} %d\n", quote(route), strconv.FormatFloat(le, 'g', -1, 64), cum)
		}
		fmt.Fprintf(&b, "perfscope_http_request_duration_seconds_bucket{route=%s,le=\"+Inf\"} %d\n", quote(route), h.n)
		fmt.Fprintf(&b, "perfscope_http_request_duration_seconds_sum{route=%s} %g\n", quote(route), h.sum)
		fmt.Fprintf(&b, "perfscope_http_request_duration_seconds_count{route=%s} %d\n", quote(route), h.n)
	}

	b.WriteString("# HELP perfscope_uploads_total Uploads received, by kind (bench, run) and outcome.\n")
	b.WriteString("# TYPE perfscope_uploads_total counter\n")
	ukeys := make([]uploadKey, 0, len(m.uploads))
	for k := range m.uploads {
		ukeys = append(ukeys, k)
	}
	slices.SortFunc(ukeys, func(a, b uploadKey) int {
		if c := strings.Compare(a.kind, b.kind); c != 0 {
			return c
		}
		return strings.Compare(a.outcome, b.outcome)
	})
	for _, k := range ukeys {
		fmt.Fprintf(&b, "perfscope_uploads_total{kind=%s,outcome=%s} %d\n", quote(k.kind), quote(k.outcome), m.uploads[k])
	}
	b.WriteString("# HELP perfscope_upload_bytes_total Bytes of accepted uploads, by kind.\n")
	b.WriteString("# TYPE perfscope_upload_bytes_total counter\n")
	for _, kind := range UploadKinds {
		fmt.Fprintf(&b, "perfscope_upload_bytes_total{kind=%s} %d\n", quote(kind), m.upBytes[kind])
	}
	b.WriteString("# HELP perfscope_start_time_seconds When the server started, in Unix seconds.\n")
	b.WriteString("# TYPE perfscope_start_time_seconds gauge\n")
	fmt.Fprintf(&b, "perfscope_start_time_seconds %d\n", m.start.Unix())
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// quote writes a label value as the exposition format wants it.
func quote(s string) string {
	s = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(s)
	return `"` + s + `"`
}
