package loadgen

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// DefaultMaxErrors is the share of failed requests above which a load
// counts as failed: a service answering more than 1% of its requests with
// errors is not the service the profiles were meant to measure.
const DefaultMaxErrors = 0.01

// NoFailures, as Config.MaxErrors, fails a load on its first failed
// request; 0 there means DefaultMaxErrors.
const NoFailures = -1.0

// Health says whether a load got the answers it was sent for. A failed
// load (a wrong path answering 404, a target that stopped answering)
// measures a failing service: its throughput and profiles describe the
// failure, not the service.
type Health struct {
	// Failed is set when no request completed or the share of failed
	// requests is above MaxErrors.
	Failed bool `json:"failed"`
	// MaxErrors is the threshold the load was judged by, as a fraction.
	MaxErrors float64 `json:"max_errors"`
	// ErrorShare is failures / requests; 1 when no request completed.
	ErrorShare float64 `json:"error_share"`
	// MainError is the most frequent kind of failure (a key of
	// Result.Errors, such as status_404 or connect_refused), MainShare its
	// share of all requests.
	MainError string  `json:"main_error,omitempty"`
	MainShare float64 `json:"main_error_share,omitempty"`
}

// Assess judges r by maxErrors: DefaultMaxErrors when 0, no failure
// allowed when negative (NoFailures).
func Assess(r *Result, maxErrors float64) *Health {
	switch {
	case maxErrors == 0:
		maxErrors = DefaultMaxErrors
	case maxErrors < 0:
		maxErrors = 0
	}
	h := &Health{MaxErrors: maxErrors, ErrorShare: 1}
	if r.Requests > 0 {
		h.ErrorShare = float64(r.Failures) / float64(r.Requests)
	}
	h.Failed = r.Requests == 0 || h.ErrorShare > maxErrors
	if len(r.Errors) > 0 {
		kinds := slices.SortedFunc(maps.Keys(r.Errors), func(a, b string) int {
			return cmp.Or(cmp.Compare(r.Errors[b], r.Errors[a]), strings.Compare(a, b))
		})
		h.MainError = kinds[0]
		h.MainShare = float64(r.Errors[kinds[0]]) / float64(max(r.Requests, 1))
	}
	return h
}
