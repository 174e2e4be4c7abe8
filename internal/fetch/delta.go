package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// ErrNoDelta marks errors of a server that does not serve delta profiles
// through ?seconds=: it refused the parameter for that profile, or ignored
// it and sent the cumulative profile. Two snapshots make the delta then
// (DeltaBetween).
var ErrNoDelta = errors.New("the pprof endpoint does not serve delta profiles (?seconds=)")

// Delta fetches the named profile's delta over the next window, a whole
// number of seconds: the server takes the cumulative profile at the
// window's start and end and sends the difference, timed over the window
// (net/http/pprof does so for allocs, heap, block, mutex, goroutine and
// threadcreate, and perfscope's expose package with them). The request
// waits for the window, plus the endpoint's timeout.
//
// A server that does not serve deltas fails with an error wrapping
// ErrNoDelta, having answered at once (it refused ?seconds=) or after the
// window (it sent a cumulative profile): take two snapshots instead.
func (e *Endpoint) Delta(ctx context.Context, name string, window time.Duration) (*profile.Profile, error) {
	secs, err := wholeSeconds(window)
	if err != nil {
		return nil, fmt.Errorf("%s delta from %s: %w", name, e.URL(name), err)
	}
	p, err := e.get(ctx, name, url.Values{"seconds": {strconv.Itoa(secs)}}, window)
	var fe *Error
	if errors.As(err, &fe) && fe.Status == http.StatusBadRequest && strings.Contains(fe.Body, "not supported") {
		// net/http/pprof's answer for a profile it keeps no deltas of.
		fe.noDelta = true
	}
	if err != nil {
		return nil, err
	}
	if p.DurationNanos <= 0 {
		// A cumulative profile has no duration; a delta's is its window.
		return nil, &Error{Profile: name, URL: e.URL(name) + "?seconds=" + strconv.Itoa(secs), noDelta: true,
			Err: fmt.Errorf("the server ignored seconds=%d and sent the cumulative profile", secs)}
	}
	return p, nil
}

// SupportsDelta reports whether the endpoint serves delta profiles
// through ?seconds=, by asking for the shortest delta of allocations it
// can serve: it takes a second, or an answer at once when the server
// refuses. A failure to ask at all is an error.
func (e *Endpoint) SupportsDelta(ctx context.Context) (bool, error) {
	_, err := e.Delta(ctx, "allocs", time.Second)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNoDelta):
		return false, nil
	}
	return false, err
}

// DeltaBetween returns end minus start, two snapshots of one cumulative
// profile, timed over the interval between them: what ?seconds= makes on
// the server, made on this side, for servers that serve no deltas and for
// windows whose length is only known once they are over.
func DeltaBetween(start, end Snapshot) (*profile.Profile, error) {
	neg := start.Profile.Copy()
	neg.Scale(-1)
	d, err := profile.Merge([]*profile.Profile{neg, end.Profile})
	if err != nil {
		return nil, fmt.Errorf("subtract start snapshot: %w", err)
	}
	d.TimeNanos = start.At.UnixNano()
	d.DurationNanos = end.At.Sub(start.At).Nanoseconds()
	if err := d.CheckValid(); err != nil {
		return nil, fmt.Errorf("invalid delta: %w", err)
	}
	return d, nil
}
