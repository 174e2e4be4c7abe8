package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/perfscope/perfscope/expose"
)

// maxMetricsBytes bounds a metrics snapshot read: expose's is some tens of
// KB, the runtime's histograms included, and grows by a line per route
// counted (1024 at most).
const maxMetricsBytes = 4 << 20

// ErrNoRequestCounts says that a target counts no requests: it serves no
// metrics snapshot beside its pprof endpoints (/debug/metrics, as
// perfscope's expose package does), or one without request counts (no
// expose middleware in front of its handlers).
var ErrNoRequestCounts = errors.New("the target counts no requests (no expose middleware)")

// RequestCounts are a target's request counts since its process started,
// and when they arrived.
type RequestCounts struct {
	Counts expose.RequestCounts
	At     time.Time
}

// RequestCounts reads the requests the target has served, as counted by
// expose's middleware, from the metrics snapshot beside its pprof base
// (for http://host:6060/debug/pprof/, http://host:6060/debug/metrics).
// A target that serves no such snapshot (404), or one without request
// counts, answers ErrNoRequestCounts.
func (e *Endpoint) RequestCounts(ctx context.Context) (RequestCounts, error) {
	u := *e.base
	u.Path, u.RawPath = e.base.ResolveReference(&url.URL{Path: "../metrics"}).Path, ""
	fail := func(status int, err error) error {
		return &Error{Profile: "request counts", URL: RedactURL(u.String()), Status: status, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := e.newRequest(ctx, &u)
	if err != nil {
		return RequestCounts{}, fail(0, err)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return RequestCounts{}, fail(0, transportCause(ctx, err, e.timeout))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return RequestCounts{}, ErrNoRequestCounts
	case resp.StatusCode != http.StatusOK:
		return RequestCounts{}, fail(resp.StatusCode, statusError(resp, ""))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMetricsBytes+1))
	if err != nil {
		return RequestCounts{}, fail(resp.StatusCode, fmt.Errorf("read answer: %w", transportCause(ctx, err, e.timeout)))
	}
	if len(data) > maxMetricsBytes {
		return RequestCounts{}, fail(resp.StatusCode, &LimitError{What: "size", Limit: maxMetricsBytes, Got: int64(len(data)), Bytes: true})
	}
	var snap expose.MetricsSnapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return RequestCounts{}, fail(resp.StatusCode, fmt.Errorf("answer is not a metrics snapshot: %w", err))
	}
	if snap.Requests == nil {
		return RequestCounts{}, ErrNoRequestCounts
	}
	return RequestCounts{Counts: *snap.Requests, At: time.Now()}, nil
}
