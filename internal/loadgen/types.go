// Package loadgen generates HTTP load the way ab and wrk do, and measures it
// honestly: latencies go into an HDR histogram, and in open-loop mode each
// latency is measured from the request's intended send time, so a stalled
// server cannot hide its stalls (coordinated omission).
package loadgen

import (
	"net/http"
	"time"
)

// A Config describes one load run. Exactly one of Requests or Duration bounds
// a closed-loop run; an open-loop run (Rate > 0) is bounded the same way.
type Config struct {
	URL              string        // target URL: http://host[:port]/path, or https://
	Method           string        // HTTP method; default GET
	Header           http.Header   // extra request headers (Host is honoured)
	Body             []byte        // request body, sent with Content-Length
	Concurrency      int           // connections (closed loop) or maximum in-flight requests (open loop); default 8
	Requests         int64         // total requests to send; 0 means bounded by Duration
	Duration         time.Duration // how long to send; 0 means bounded by Requests
	Rate             float64       // requests per second at a constant arrival rate; 0 means closed loop
	Timeout          time.Duration // per request; default 10s
	DisableKeepAlive bool          // open a new connection for every request
	// InsecureSkipVerify accepts any certificate from an https target,
	// such as a self-signed one on a test machine.
	InsecureSkipVerify bool
	// MaxErrors is the share of failed requests above which the load
	// counts as failed (Result.Health); default DefaultMaxErrors.
	// NoFailures allows none.
	MaxErrors float64
	// Progress, when set, is called about four times a second from a
	// single goroutine with the run's progress so far.
	Progress func(Progress)
}

// Progress is a snapshot of a run in progress.
type Progress struct {
	Elapsed    time.Duration
	Requests   int64   // completed so far
	Errors     int64   // failed so far (any kind)
	CurrentRPS float64 // completions per second over the last interval
	Planned    int64   // Config.Requests, or 0
	PlannedDur time.Duration
}

// A Result is what a load run measured. Its JSON field names are stable
// (`perfscope load --format json` prints it):
//
//	url               the target URL
//	method            the HTTP method
//	mode              "closed" (-c connections back to back) or "open" (--rate)
//	concurrency       connections (closed loop) or most requests in flight (open loop)
//	rate              open loop: the requested arrival rate, requests per second
//	keepalive         whether connections were reused between requests
//	start             when the load started (RFC 3339), after connections were opened
//	duration_seconds  from the start to the last completion
//	requests          completed requests: successes + failures
//	successes         responses with a 2xx status
//	failures          everything else: transport errors and non-2xx statuses
//	errors            failures by kind: connect_refused, timeout, reset, closed,
//	                  malformed, other, and status_NNN per non-2xx status code
//	throughput_rps    successes / duration_seconds: 2xx responses per second
//	health            failed, max_errors, error_share, main_error, main_error_share:
//	                  whether the load failed (no request completed, or more than
//	                  max_errors of the requests failed) and its main kind of failure
//	bytes_read        response bytes, headers included
//	bytes_written     request bytes, headers included
//	latency           min_ms, mean_ms, p50_ms, p90_ms, p99_ms, p999_ms, max_ms of
//	                  every request that got a response, whatever its status; in
//	                  open loop measured from the request's intended send time
//	late              open loop only: count (sends more than 1ms behind schedule),
//	                  max_lag_ms (the worst), dropped (sends due before the run
//	                  ended but never made, for want of a free connection)
//	interrupted       the run was stopped early (Ctrl-C); the numbers are partial
//	status_codes      responses by status code, 2xx included
type Result struct {
	URL         string    `json:"url"`
	Method      string    `json:"method"`
	Mode        string    `json:"mode"` // "closed" or "open"
	Concurrency int       `json:"concurrency"`
	Rate        float64   `json:"rate,omitempty"` // open loop: requested arrival rate
	KeepAlive   bool      `json:"keepalive"`
	Start       time.Time `json:"start"`
	// DurationSeconds is the wall time from the first send to the last completion.
	DurationSeconds float64 `json:"duration_seconds"`
	Requests        int64   `json:"requests"`  // completed requests (success or failure)
	Successes       int64   `json:"successes"` // 2xx responses
	Failures        int64   `json:"failures"`  // everything else
	// Errors counts failures by kind: "connect_refused", "timeout", "reset",
	// "closed" (server closed the connection), "malformed" (a response
	// that is not HTTP/1.x), "other", and "status_NNN" for each non-2xx
	// status code.
	Errors       map[string]int64 `json:"errors"`
	Throughput   float64          `json:"throughput_rps"` // successful (2xx) responses per second
	BytesRead    int64            `json:"bytes_read"`     // response bytes, headers included
	BytesWritten int64            `json:"bytes_written"`
	Latency      Latency          `json:"latency"`
	Late         *Late            `json:"late,omitempty"` // open loop only
	Interrupted  bool             `json:"interrupted"`    // stopped early (Ctrl-C or cancelled context)
	StatusCodes  map[int]int64    `json:"status_codes"`
	// Health judges the load by Config.MaxErrors; nil in results saved
	// before it was recorded.
	Health *Health `json:"health,omitempty"`
}

// Latency summarises the latency histogram, in milliseconds.
type Latency struct {
	Min  float64 `json:"min_ms"`
	Mean float64 `json:"mean_ms"`
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p999_ms"`
	Max  float64 `json:"max_ms"`
}

// Late reports open-loop requests the generator could not send on time.
type Late struct {
	Count    int64   `json:"count"`      // requests sent more than 1ms after their intended time
	MaxLagMs float64 `json:"max_lag_ms"` // worst send delay
	Dropped  int64   `json:"dropped"`    // intended sends never made (run ended first)
}
