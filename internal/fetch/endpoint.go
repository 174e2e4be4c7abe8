package fetch

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// DefaultTimeout bounds one request to a pprof endpoint when
// EndpointOptions.Timeout is zero. A snapshot answers in milliseconds; a
// CPU or delta profile gets its window on top.
const DefaultTimeout = 10 * time.Second

// DefaultLocalURL is where perfscope's expose package, and the bundled
// examples, serve pprof by default: a listener of its own on loopback.
const DefaultLocalURL = "http://127.0.0.1:6060/debug/pprof/"

// EndpointOptions say how to reach one pprof endpoint. Zero values mean
// the documented defaults.
type EndpointOptions struct {
	// Client sends the requests; share one among many endpoints to share
	// its connections. Default: a client of the endpoint's own (see
	// TLSConfig), closed by Endpoint.Close, which never goes through a
	// proxy and follows at most 3 redirects.
	Client *http.Client
	// TLSConfig configures the endpoint's own client, when Client is nil:
	// the roots that verify the server, or a client certificate for a
	// server that authenticates by mutual TLS.
	TLSConfig *tls.Config
	// Header is sent with every request. A Host entry sets the request's
	// Host, for a server that selects a site by it.
	Header http.Header
	// Token, when set, is sent as "Authorization: Bearer <Token>", over
	// any Authorization in Header: perfscope's expose package requires
	// one off loopback.
	Token string
	// Timeout bounds each request; a CPU or delta profile request gets its
	// window on top. Default DefaultTimeout.
	Timeout time.Duration
	// Limits bound each profile read (see Parse). Its MaxBytes bounds
	// the answer's size before inflating too.
	Limits Limits
}

// An Endpoint is one pprof base URL, such as
// http://127.0.0.1:6060/debug/pprof/, and how to reach it. Its methods
// fetch the profiles under it; each answer is read through Parse. It is
// safe for concurrent use.
type Endpoint struct {
	base      *url.URL // ends in "/"
	client    *http.Client
	ownClient bool
	header    http.Header
	token     string
	timeout   time.Duration
	limits    Limits
}

// NewEndpoint returns the endpoint at base, an http:// or https:// URL
// under which the pprof endpoints are named ("profile", "heap"). A base
// without a trailing slash gets one; its query parameters are sent with
// every request. NewEndpoint sends nothing.
func NewEndpoint(base string, opts EndpointOptions) (*Endpoint, error) {
	u, err := ParseBase(base)
	if err != nil {
		return nil, err
	}
	return newEndpoint(u, opts), nil
}

func newEndpoint(base *url.URL, opts EndpointOptions) *Endpoint {
	e := &Endpoint{
		base:    base,
		client:  opts.Client,
		header:  opts.Header.Clone(),
		token:   opts.Token,
		timeout: opts.Timeout,
		limits:  opts.Limits.withDefaults(),
	}
	if e.client == nil {
		e.client, e.ownClient = newClient(opts.TLSConfig), true
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	return e
}

// newClient is an endpoint's own client. Its connections stay apart from
// any other traffic to the same service (a load, typically), so profile
// requests never queue behind it.
func newClient(tlsConfig *tls.Config) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil, // pprof endpoints are internal; never route them through a proxy
			MaxIdleConnsPerHost: 8,
			TLSClientConfig:     tlsConfig,
			IdleConnTimeout:     30 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}
}

// ParseBase parses a pprof base URL, making sure it ends in a slash so
// endpoint names append to it. An origin alone (http://host:6060) means
// its /debug/pprof/.
func ParseBase(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		// url.Error quotes the URL as given, secrets included.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("pprof URL %q: %w", RedactURL(s), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pprof URL %q: want an http:// or https:// URL such as %s", RedactURL(s), DefaultLocalURL)
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

// Close releases the idle connections of the endpoint's own client; a
// Client given in EndpointOptions is left alone.
func (e *Endpoint) Close() {
	if e.ownClient {
		e.client.CloseIdleConnections()
	}
}

// Base is the endpoint's base URL, redacted (RedactURL).
func (e *Endpoint) Base() string { return RedactURL(e.base.String()) }

// URL is the URL of the named endpoint under the base, redacted, as runs
// record it: "profile" for the CPU profile, else a profile's name.
func (e *Endpoint) URL(name string) string { return RedactURL(e.endpointURL(name, nil).String()) }

// endpointURL is the URL of one pprof endpoint under the base, keeping the
// base's own query parameters.
func (e *Endpoint) endpointURL(name string, query url.Values) *url.URL {
	u := *e.base
	u.Path = e.base.Path + name
	u.RawPath = ""
	q := e.base.Query()
	for k, vs := range query {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return &u
}

// A Snapshot is a cumulative profile and when it arrived.
type Snapshot struct {
	Profile *profile.Profile
	At      time.Time
}

// Snapshot fetches the named profile as it stands: "allocs", "heap",
// "block", "mutex", "goroutine", "threadcreate" (with debug=0, the
// protobuf form). Allocs, heap, block and mutex are cumulative since the
// process started; two snapshots make a delta (DeltaBetween).
func (e *Endpoint) Snapshot(ctx context.Context, name string) (Snapshot, error) {
	p, err := e.get(ctx, name, url.Values{"debug": {"0"}}, 0)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Profile: p, At: time.Now()}, nil
}

// Goroutines fetches the goroutine profile: every goroutine's stack now.
// Every pprof server has it, it is small and it answers at once, so it
// also shows whether the endpoint serves profiles at all.
func (e *Endpoint) Goroutines(ctx context.Context) (Snapshot, error) {
	return e.Snapshot(ctx, "goroutine")
}

// CPU takes a CPU profile over the next window, a whole number of
// seconds (pprof's profile?seconds=N). The request waits for the window,
// plus the endpoint's timeout. A process runs one CPU profiler at a time:
// when another one runs, the *Error says so (Error.CPUBusy).
//
// Cancelling ctx gives the request up, and net/http/pprof then stops
// profiling with nobody to send the profile to: a caller that must keep
// what was sampled so far waits for the window instead (pass a ctx
// without cancel, context.WithoutCancel), and keeps windows short.
func (e *Endpoint) CPU(ctx context.Context, window time.Duration) (*profile.Profile, error) {
	secs, err := wholeSeconds(window)
	if err != nil {
		return nil, fmt.Errorf("cpu profile from %s: %w", e.URL("profile"), err)
	}
	return e.get(ctx, "profile", url.Values{"seconds": {strconv.Itoa(secs)}}, window)
}

// wholeSeconds checks that a window is a positive whole number of
// seconds, as pprof's seconds parameter takes.
func wholeSeconds(window time.Duration) (int, error) {
	if window < time.Second || window%time.Second != 0 {
		return 0, fmt.Errorf("window %s: want a whole number of seconds, at least 1s", window)
	}
	return int(window / time.Second), nil
}

// get fetches one profile through the bounded reader and checks that it
// is a valid pprof profile. The request is bounded by the endpoint's
// timeout plus window, the time the server spends collecting before it
// answers.
func (e *Endpoint) get(ctx context.Context, name string, query url.Values, window time.Duration) (*profile.Profile, error) {
	u := e.endpointURL(name, query)
	kind := name
	if name == "profile" {
		kind = "cpu"
	}
	fail := func(status int, body string, unreachable bool, err error) error {
		return &Error{Profile: kind, URL: RedactURL(u.String()), Status: status, Body: body, Unreachable: unreachable, Err: err}
	}
	wait := e.timeout + window
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	req, err := e.newRequest(ctx, u)
	if err != nil {
		return nil, fail(0, "", false, err)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, fail(0, "", true, transportCause(ctx, err, wait))
	}
	defer resp.Body.Close()
	body := &answer{r: resp.Body, limit: e.limits.MaxBytes}
	contentType := resp.Header.Get("Content-Type")
	if resp.StatusCode != http.StatusOK {
		// Enough for the first line, whatever the server sends.
		data, err := io.ReadAll(io.LimitReader(body, 4<<10))
		if err != nil {
			return nil, fail(resp.StatusCode, "", true, fmt.Errorf("read answer: %w", transportCause(ctx, err, wait)))
		}
		line := ""
		if !isHTML(contentType, data) {
			line = firstLine(data)
		}
		return nil, fail(resp.StatusCode, line, false, statusError(resp, line))
	}
	br := bufio.NewReader(body)
	if head, _ := br.Peek(512); isHTML(contentType, head) {
		return nil, fail(resp.StatusCode, "", false, errors.New("got an HTML page, not a profile (is this URL a pprof endpoint?)"))
	}
	p, st, err := Parse(ctx, br, e.limits)
	switch {
	case body.err != nil:
		return nil, fail(resp.StatusCode, "", true, fmt.Errorf("read answer: %w", transportCause(ctx, body.err, wait)))
	case err != nil && ctx.Err() != nil:
		return nil, fail(resp.StatusCode, "", true, transportCause(ctx, ctx.Err(), wait))
	case errors.Is(err, ErrTooLarge):
		return nil, fail(resp.StatusCode, "", false, err)
	case err != nil:
		return nil, fail(resp.StatusCode, "", false, fmt.Errorf("answer is not a pprof profile (%s, %d bytes): %w",
			describeContentType(contentType), st.Compressed, err))
	}
	if err := p.CheckValid(); err != nil {
		return nil, fail(resp.StatusCode, "", false, fmt.Errorf("invalid profile: %w", err))
	}
	return p, nil
}

// newRequest is a GET of u with the endpoint's headers and token.
func (e *Endpoint) newRequest(ctx context.Context, u *url.URL) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range e.header {
		if http.CanonicalHeaderKey(k) == "Host" {
			req.Host = vs[0]
			continue
		}
		req.Header[k] = vs
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	return req, nil
}

// transportCause is what went wrong with a request that got no complete
// answer, in words: url.Error's repetition of the method and URL, which
// an Error names already, removed, and the context's errors said as what
// they mean here.
func transportCause(ctx context.Context, err error, wait time.Duration) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return fmt.Errorf("no answer within %s", wait)
	}
	if errors.Is(err, context.Canceled) {
		return errors.New("interrupted")
	}
	return err
}

// An answer is a response body read up to a limit in bytes as sent, so
// that an answer costs no more than a profile may, compressed or not. It
// keeps the transport's read error apart from what parsing makes of the
// bytes.
type answer struct {
	r     io.Reader
	n     int64
	limit int64 // negative: none
	err   error // a read error of the transport
}

func (a *answer) Read(p []byte) (int, error) {
	if a.limit >= 0 && a.n > a.limit {
		return 0, &LimitError{What: "size", Limit: a.limit, Got: a.limit + 1, Bytes: true}
	}
	n, err := a.r.Read(p)
	a.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		a.err = err
	}
	return n, err
}
