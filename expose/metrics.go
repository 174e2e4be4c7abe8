package expose

import (
	"encoding/json"
	"math"
	"net/http"
	"runtime/metrics"
	"time"
)

// A MetricsSnapshot is the JSON document served at /debug/metrics: every
// metric runtime/metrics supports, read at one moment. Its field names are
// stable.
type MetricsSnapshot struct {
	// Time is when the metrics were read.
	Time time.Time `json:"time"`
	// Metrics maps a runtime/metrics name, such as
	// "/sched/goroutines:goroutines", to its value; and RequestsMetric to
	// the requests Middleware counted.
	Metrics map[string]MetricValue `json:"metrics"`
	// Requests are the requests served through Middleware and
	// ContextMiddleware, by route and method; absent until either
	// middleware has been made, so that a process that counts none is
	// not mistaken for one that served none.
	Requests *RequestCounts `json:"requests,omitempty"`
}

// A MetricValue is one runtime metric. Kind says which fields are set:
// "uint64" and "float64" set Value, "float64histogram" sets Counts and
// Boundaries.
type MetricValue struct {
	Kind string `json:"kind"`
	// Cumulative is true when the value only grows over the process's life
	// (a counter), so rates come from differences between two snapshots.
	Cumulative bool `json:"cumulative"`
	// Value is the value of a uint64 or float64 metric. uint64 values are
	// converted to float64, exact up to 2^53 (9 PB, or 285 years in
	// nanoseconds), which covers the runtime's counters.
	Value *float64 `json:"value,omitempty"`
	// Counts[i] is the number of observations in the half-open bucket
	// [Boundaries[i], Boundaries[i+1]).
	Counts []uint64 `json:"counts,omitempty"`
	// Boundaries has one more element than Counts. An infinite first or
	// last boundary, which JSON cannot express, is null.
	Boundaries []*float64 `json:"boundaries,omitempty"`
}

// metricsHandler serves a MetricsSnapshot as JSON. It takes no parameters.
func metricsHandler() http.Handler {
	descs := metrics.All()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		samples := make([]metrics.Sample, len(descs))
		for i, d := range descs {
			samples[i].Name = d.Name
		}
		metrics.Read(samples)
		snap := MetricsSnapshot{Time: time.Now(), Metrics: make(map[string]MetricValue, len(samples))}
		for i, s := range samples {
			v := MetricValue{Cumulative: descs[i].Cumulative}
			switch s.Value.Kind() {
			case metrics.KindUint64:
				v.Kind = "uint64"
				v.Value = finite(float64(s.Value.Uint64()))
			case metrics.KindFloat64:
				v.Kind = "float64"
				v.Value = finite(s.Value.Float64())
			case metrics.KindFloat64Histogram:
				h := s.Value.Float64Histogram()
				v.Kind = "float64histogram"
				v.Counts = h.Counts
				v.Boundaries = make([]*float64, len(h.Buckets))
				for j, b := range h.Buckets {
					v.Boundaries[j] = finite(b)
				}
			default:
				// KindBad: a metric this Go version does not support, or a
				// kind added after this code was written; leave it out
				// rather than guess its shape.
				continue
			}
			snap.Metrics[s.Name] = v
		}
		if rc := routes.requestCounts(); rc != nil {
			snap.Requests = rc
			snap.Metrics[RequestsMetric] = MetricValue{Kind: "uint64", Cumulative: true, Value: finite(float64(rc.Total))}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		// An encoding error here is a failed write to the client, which
		// sees a truncated body; there is no one else to tell.
		_ = json.NewEncoder(w).Encode(snap)
	})
}

// finite returns a pointer to f, or nil when f cannot be written as a JSON
// number.
func finite(f float64) *float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil
	}
	return &f
}
