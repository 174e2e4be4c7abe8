package capture

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/perfscope/perfscope/internal/run"
)

// DefaultFallbackPprofURL is where Profile looks for pprof when the target's
// own origin has none and the target runs on this machine: the loopback
// listener on which perfscope's expose package and the bundled examples
// serve pprof by default.
const DefaultFallbackPprofURL = "http://127.0.0.1:6060/debug/pprof/"

// Where a run's pprof base URL came from (Run.PprofSource).
const (
	PprofGiven    = "given"    // Options.PprofURL
	PprofTarget   = "target"   // the target's origin + /debug/pprof/
	PprofFallback = "fallback" // Options.FallbackPprofURL, the target's origin having none
)

// A pprofEndpoint is the pprof base URL chosen for a run.
type pprofEndpoint struct {
	f      *fetcher
	url    string // redacted, for run.json
	source string
	note   string // how it was chosen, when the user would not expect it
}

// probe fetches the goroutine profile: every pprof server has it, it is
// small, and it answers at once, so it shows whether the base URL serves
// profiles at all before any load is spent.
func probe(ctx context.Context, f *fetcher) error {
	_, err := f.fetch(ctx, "goroutine", "goroutine", url.Values{"debug": {"0"}}, 0)
	return err
}

// findPprof chooses and checks the pprof base URL. An explicit URL must work.
// Otherwise the target's origin is tried, then, for a target on this machine,
// the fallback URL. The error is one line saying what was tried and what to do.
func findPprof(ctx context.Context, o Options, target *url.URL) (pprofEndpoint, error) {
	if o.PprofURL != "" {
		base, err := parseBase(o.PprofURL)
		if err != nil {
			return pprofEndpoint{url: run.RedactURL(o.PprofURL)}, err
		}
		ep := o.endpoint(base, target, PprofGiven)
		if err := probe(ctx, ep.f); err != nil {
			ep.f.close()
			return ep, fmt.Errorf("pprof endpoint %s is not usable: %s%s", ep.url, reason(err), authHint(err))
		}
		return o.verify(ctx, ep, target)
	}

	own := &url.URL{Scheme: target.Scheme, User: target.User, Host: target.Host, Path: "/debug/pprof/"}
	ep := o.endpoint(own, target, PprofTarget)
	ownErr := probe(ctx, ep.f)
	if ownErr == nil {
		return o.verify(ctx, ep, target)
	}
	ep.f.close()
	if ctx.Err() != nil {
		return ep, fmt.Errorf("find pprof endpoint: %w", ctx.Err())
	}
	var fe *fetchError
	if errors.As(ownErr, &fe) && (fe.status == http.StatusUnauthorized || fe.status == http.StatusForbidden) {
		// The endpoint exists; falling back elsewhere would hide the real problem.
		return ep, fmt.Errorf("pprof endpoint %s is not usable: %s%s", ep.url, reason(ownErr), authHint(ownErr))
	}
	advice := "serve net/http/pprof (or start perfscope's expose package) and point --pprof at it"
	if o.FallbackPprofURL == "-" || !isLocalHost(target.Hostname()) {
		return ep, fmt.Errorf("no pprof endpoint at %s (%s); %s", ep.url, reason(ownErr), advice)
	}
	fb, err := parseBase(o.FallbackPprofURL)
	if err != nil {
		return ep, err
	}
	alt := o.endpoint(fb, target, PprofFallback)
	if altErr := probe(ctx, alt.f); altErr != nil {
		alt.f.close()
		return ep, fmt.Errorf("no pprof endpoint at %s (%s) nor at %s (%s); %s",
			ep.url, reason(ownErr), alt.url, reason(altErr), advice)
	}
	alt.note = fmt.Sprintf("The target has no pprof at %s (%s), so profiles were taken from %s, "+
		"the loopback listener on which perfscope's expose package serves pprof by default.", ep.url, reason(ownErr), alt.url)
	return o.verify(ctx, alt, target)
}

// verify proves that ep belongs to the target's process (see
// proveIdentity), unless Options.PprofUnverified says the proof cannot
// work; then the run carries a note saying the profiles are unverified.
// The error is one line naming the target, the endpoint and what to do.
func (o Options) verify(ctx context.Context, ep pprofEndpoint, target *url.URL) (pprofEndpoint, error) {
	if o.PprofUnverified {
		ep.note = joinSentences(ep.note, fmt.Sprintf("The pprof endpoint %s was not proven to belong to the process serving %s "+
			"(--pprof-unverified): the profiles are that endpoint's process's, whichever it is.", ep.url, run.RedactURL(target.String())))
		return ep, nil
	}
	err := proveIdentity(ctx, ep.f, target)
	if err == nil {
		return ep, nil
	}
	ep.f.close()
	var nt notTargetError
	if errors.As(err, &nt) {
		return ep, notTargetError{why: fmt.Sprintf("pprof endpoint %s is not the process serving %s (%s); "+
			"point --pprof at the target's own pprof endpoint, or add --pprof-unverified when a proxy stands between perfscope and the target",
			ep.url, run.RedactURL(target.String()), nt.why)}
	}
	return ep, fmt.Errorf("pprof endpoint %s: could not check that it is the process serving %s: %s", ep.url, run.RedactURL(target.String()), reason(err))
}

func joinSentences(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// endpoint builds the fetcher for one candidate base URL. The load's headers
// (authorization, typically) apply to pprof too, then Options.Header on top;
// Host is kept only on the target's own origin, where it selects the site.
func (o Options) endpoint(base, target *url.URL, source string) pprofEndpoint {
	h := o.Load.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	for k, vs := range o.Header {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	if base.Scheme != target.Scheme || base.Host != target.Host {
		h.Del("Host")
	}
	return pprofEndpoint{f: newFetcher(base, h, o.FetchTimeout, o.Load.InsecureSkipVerify), url: run.RedactURL(base.String()), source: source}
}

// parseBase parses a pprof base URL, making sure it ends in a slash so
// endpoint names append to it.
func parseBase(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("pprof URL %q: %w", run.RedactURL(s), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pprof URL %q: want an http:// or https:// URL such as %s", run.RedactURL(s), DefaultFallbackPprofURL)
	}
	if u.Path == "" || u.Path == "/" {
		// An origin alone means its pprof, as go tool pprof takes it.
		u.Path, u.RawPath = "/debug/pprof/", ""
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		u.RawPath = ""
	}
	return u, nil
}

// reason is the part of a fetch error after the profile and URL, for
// messages that already name the endpoint.
func reason(err error) string {
	var fe *fetchError
	if errors.As(err, &fe) {
		return fe.err.Error()
	}
	return err.Error()
}

func authHint(err error) string {
	var fe *fetchError
	if errors.As(err, &fe) && (fe.status == http.StatusUnauthorized || fe.status == http.StatusForbidden) {
		return "; pass its credentials with -H, for example -H 'Authorization: Bearer TOKEN'"
	}
	return ""
}

// isLocalHost reports whether host names this machine. Only literal
// addresses and localhost count: a remote name that happens to resolve here
// is rare, and guessing wrong would profile some other process.
func isLocalHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if local, ok := netip.AddrFromSlice(n.IP); ok && local.Unmap() == ip.WithZone("") {
				return true
			}
		}
	}
	return false
}
