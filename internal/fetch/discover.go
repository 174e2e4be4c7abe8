package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// Where a discovered endpoint came from (Discovery.Source).
const (
	SourceGiven    = "given"    // DiscoverOptions.Given
	SourceTarget   = "target"   // the target's origin + /debug/pprof/
	SourceFallback = "fallback" // DiscoverOptions.Fallback, the target's origin having none
)

// ErrNoEndpoint marks Discover's failure to find any endpoint serving
// profiles.
var ErrNoEndpoint = errors.New("no pprof endpoint")

// DiscoverOptions say where Discover looks for a target's pprof endpoint
// and how it reaches each candidate.
type DiscoverOptions struct {
	// Given is the pprof base URL to use. When set it alone is tried, and
	// must serve profiles.
	Given string
	// Fallback is tried when Given is empty, the target's origin serves
	// no pprof and the target runs on this machine (IsLocalHost), as a
	// service using perfscope's expose package serves pprof on a listener
	// of its own (DefaultLocalURL). Empty: none.
	Fallback string
	// Endpoint says how to reach every candidate. A Host entry in its
	// Header is sent only to the target's own origin, where it selects the
	// site.
	Endpoint EndpointOptions
}

// A Discovery is the endpoint Discover chose and how.
type Discovery struct {
	// Endpoint is the endpoint chosen, nil when Discover failed.
	Endpoint *Endpoint
	// Base is Endpoint's base URL, redacted; when Discover failed, the
	// first candidate's (the given URL, or the target's origin).
	Base string
	// Source says where Endpoint came from: SourceGiven, SourceTarget or
	// SourceFallback.
	Source string
	// Passed is the base URL of the target's own origin, redacted, when
	// it was passed over for the fallback; PassedErr says why.
	Passed    string
	PassedErr error
}

// Discover finds the pprof endpoint of the service serving target: the
// given URL, else the target's origin + /debug/pprof/, else, for a target
// on this machine, the fallback. A candidate is kept once it serves a
// goroutine profile; Discover does not prove that it is the target's
// process (ProveIdentity does). The error is one line saying what was
// tried and why it failed: an *Error for a given endpoint or one that
// refused the credentials (401, 403: another candidate would hide the real
// problem), ErrNoEndpoint when nothing served profiles, a parse error for a
// malformed URL. The Discovery is never nil.
func Discover(ctx context.Context, target *url.URL, opts DiscoverOptions) (*Discovery, error) {
	if opts.Given != "" {
		base, err := ParseBase(opts.Given)
		if err != nil {
			return &Discovery{Base: RedactURL(opts.Given)}, err
		}
		e := candidate(base, target, opts.Endpoint)
		if _, err := e.Goroutines(ctx); err != nil {
			e.Close()
			return &Discovery{Base: e.Base()}, unusable(e, err)
		}
		return &Discovery{Endpoint: e, Base: e.Base(), Source: SourceGiven}, nil
	}

	own := candidate(&url.URL{Scheme: target.Scheme, User: target.User, Host: target.Host, Path: "/debug/pprof/"}, target, opts.Endpoint)
	failed := &Discovery{Base: own.Base()}
	_, ownErr := own.Goroutines(ctx)
	if ownErr == nil {
		return &Discovery{Endpoint: own, Base: own.Base(), Source: SourceTarget}, nil
	}
	own.Close()
	if ctx.Err() != nil {
		return failed, fmt.Errorf("find pprof endpoint: %w", ctx.Err())
	}
	if fe := (*Error)(nil); errors.As(ownErr, &fe) && fe.Unauthorized() {
		return failed, unusable(own, ownErr)
	}
	if opts.Fallback == "" || !IsLocalHost(target.Hostname()) {
		return failed, &wrapped{msg: fmt.Sprintf("no pprof endpoint at %s (%s)", own.Base(), Reason(ownErr)), err: ErrNoEndpoint}
	}
	fb, err := ParseBase(opts.Fallback)
	if err != nil {
		return failed, err
	}
	alt := candidate(fb, target, opts.Endpoint)
	if _, altErr := alt.Goroutines(ctx); altErr != nil {
		alt.Close()
		return failed, &wrapped{msg: fmt.Sprintf("no pprof endpoint at %s (%s) nor at %s (%s)",
			own.Base(), Reason(ownErr), alt.Base(), Reason(altErr)), err: ErrNoEndpoint}
	}
	return &Discovery{Endpoint: alt, Base: alt.Base(), Source: SourceFallback, Passed: own.Base(), PassedErr: ownErr}, nil
}

// candidate is the endpoint at base for target: the Host header is kept
// only on the target's own origin.
func candidate(base, target *url.URL, opts EndpointOptions) *Endpoint {
	if base.Scheme != target.Scheme || base.Host != target.Host {
		opts.Header = opts.Header.Clone()
		opts.Header.Del("Host")
	}
	return newEndpoint(base, opts)
}

// unusable is the error of a candidate that must work and does not.
func unusable(e *Endpoint, err error) error {
	return &wrapped{msg: fmt.Sprintf("pprof endpoint %s is not usable: %s", e.Base(), Reason(err)), err: err}
}

// wrapped is an error with a message of its own that still answers
// errors.Is and errors.As for its cause.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// IsLocalHost reports whether host names this machine. Only literal
// addresses and localhost count: a remote name that happens to resolve
// here is rare, and guessing wrong would profile some other process.
func IsLocalHost(host string) bool {
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
