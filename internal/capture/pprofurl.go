package capture

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/run"
)

// DefaultFallbackPprofURL is where Profile looks for pprof when the target's
// own origin has none and the target runs on this machine: the loopback
// listener on which perfscope's expose package and the bundled examples
// serve pprof by default.
const DefaultFallbackPprofURL = fetch.DefaultLocalURL

// Where a run's pprof base URL came from (Run.PprofSource).
const (
	PprofGiven    = fetch.SourceGiven    // Options.PprofURL
	PprofTarget   = fetch.SourceTarget   // the target's origin + /debug/pprof/
	PprofFallback = fetch.SourceFallback // Options.FallbackPprofURL, the target's origin having none
)

// ErrNotTarget reports a pprof endpoint that did not prove it belongs to
// the target's process (see fetch.ProveIdentity).
var ErrNotTarget = fetch.ErrNotTarget

// A pprofEndpoint is the pprof base URL chosen for a run.
type pprofEndpoint struct {
	e      *fetch.Endpoint
	url    string // redacted, for run.json
	source string
	note   string // how it was chosen, when the user would not expect it
}

// findPprof chooses and checks the pprof base URL (fetch.Discover), then
// proves it is the target's (verify). The error is one line saying what
// was tried and what to do.
func findPprof(ctx context.Context, o Options, target *url.URL) (pprofEndpoint, error) {
	fallback := o.FallbackPprofURL
	if fallback == "-" {
		fallback = ""
	}
	d, err := fetch.Discover(ctx, target, fetch.DiscoverOptions{
		Given:    o.PprofURL,
		Fallback: fallback,
		Endpoint: o.endpointOptions(),
	})
	ep := pprofEndpoint{e: d.Endpoint, url: d.Base, source: d.Source}
	if err != nil {
		var fe *fetch.Error
		switch {
		case errors.Is(err, fetch.ErrNoEndpoint):
			err = fmt.Errorf("%w; serve net/http/pprof (or start perfscope's expose package) and point --pprof at it", err)
		case errors.As(err, &fe) && fe.Unauthorized():
			err = fmt.Errorf("%w; pass its credentials with -H, for example -H 'Authorization: Bearer TOKEN'", err)
		}
		return ep, err
	}
	if d.Source == PprofFallback {
		ep.note = fmt.Sprintf("The target has no pprof at %s (%s), so profiles were taken from %s, "+
			"the loopback listener on which perfscope's expose package serves pprof by default.", d.Passed, fetch.Reason(d.PassedErr), ep.url)
	}
	return o.verify(ctx, ep, target)
}

// endpointOptions say how pprof is reached. The load's headers
// (authorization, typically) apply to pprof too, then Options.Header on
// top; a target accepted without verification (a self-signed test
// certificate) serves its pprof under the same certificate.
func (o Options) endpointOptions() fetch.EndpointOptions {
	h := o.Load.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	for k, vs := range o.Header {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	return fetch.EndpointOptions{
		Header:    h,
		Timeout:   o.FetchTimeout,
		TLSConfig: &tls.Config{InsecureSkipVerify: o.Load.InsecureSkipVerify},
	}
}

// verify proves that ep belongs to the target's process
// (fetch.ProveIdentity), unless Options.PprofUnverified says the proof
// cannot work; then the run carries a note saying the profiles are
// unverified. The error is one line naming the target, the endpoint and
// what to do.
func (o Options) verify(ctx context.Context, ep pprofEndpoint, target *url.URL) (pprofEndpoint, error) {
	if o.PprofUnverified {
		ep.note = joinSentences(ep.note, fmt.Sprintf("The pprof endpoint %s was not proven to belong to the process serving %s "+
			"(--pprof-unverified): the profiles are that endpoint's process's, whichever it is.", ep.url, run.RedactURL(target.String())))
		return ep, nil
	}
	err := fetch.ProveIdentity(ctx, ep.e, target)
	if err == nil {
		return ep, nil
	}
	ep.e.Close()
	ep.e = nil
	if errors.Is(err, fetch.ErrNotTarget) {
		return ep, &notTarget{msg: fmt.Sprintf("pprof endpoint %s is not the process serving %s (%s); "+
			"point --pprof at the target's own pprof endpoint, or add --pprof-unverified when a proxy stands between perfscope and the target",
			ep.url, run.RedactURL(target.String()), err), err: err}
	}
	return ep, fmt.Errorf("pprof endpoint %s: could not check that it is the process serving %s: %s", ep.url, run.RedactURL(target.String()), fetch.Reason(err))
}

// notTarget is a refused endpoint: its message says what to do, and it
// wraps ErrNotTarget.
type notTarget struct {
	msg string
	err error
}

func (e *notTarget) Error() string { return e.msg }
func (e *notTarget) Unwrap() error { return e.err }

func joinSentences(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}
