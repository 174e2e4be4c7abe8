package capture

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perfscope/perfscope/internal/fetch"
	"github.com/perfscope/perfscope/internal/run"
)

// maxProfileBytes bounds one response body. Real profiles of large services
// are tens of megabytes; anything far bigger is not a profile we want to hold
// in memory.
const maxProfileBytes = 256 << 20

// A fetcher gets profiles from one pprof base URL.
type fetcher struct {
	client  *http.Client
	base    *url.URL    // ends in "/"
	header  http.Header // sent with every request; Host is applied as req.Host
	timeout time.Duration
}

func newFetcher(base *url.URL, header http.Header, timeout time.Duration, insecure bool) *fetcher {
	return &fetcher{
		// A client of its own: the load's connections and tuning stay the
		// load generator's, and pprof requests never queue behind them.
		client: &http.Client{
			Transport: &http.Transport{
				Proxy:               nil, // pprof endpoints are internal; never route them through a proxy
				MaxIdleConnsPerHost: 8,
				// A target accepted without verification (a self-signed test
				// certificate) serves its pprof under the same certificate.
				TLSClientConfig: &tls.Config{InsecureSkipVerify: insecure},
				IdleConnTimeout: 30 * time.Second,
			},
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= 3 {
					return errors.New("too many redirects")
				}
				return nil
			},
		},
		base:    base,
		header:  header,
		timeout: timeout,
	}
}

// close releases the fetcher's idle connections.
func (f *fetcher) close() { f.client.CloseIdleConnections() }

// endpointURL is the URL of one pprof endpoint under the base, keeping the
// base's own query parameters.
func (f *fetcher) endpointURL(endpoint string, query url.Values) *url.URL {
	u := *f.base
	u.Path = f.base.Path + endpoint
	u.RawPath = ""
	q := f.base.Query()
	for k, vs := range query {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return &u
}

// A fetchError is a failed profile fetch. Its message is one line naming the
// profile and the URL; the fields let callers turn known failures into notes.
type fetchError struct {
	kind   string
	url    string
	status int    // HTTP status when the server answered, else 0
	body   string // first line of a non-200 answer's text
	// unreachable is set when no HTTP answer arrived at all: refused,
	// reset, timed out.
	unreachable bool
	err         error
}

func (e *fetchError) Error() string {
	return fmt.Sprintf("fetch %s profile from %s: %v", e.kind, e.url, e.err)
}

func (e *fetchError) Unwrap() error { return e.err }

// cpuBusy reports whether the server refused a CPU profile because another
// one is running: net/http/pprof answers 500 "cpu profiling already in use",
// perfscope's expose package 409 Conflict.
func (e *fetchError) cpuBusy() bool {
	return e.status == http.StatusConflict ||
		(e.status == http.StatusInternalServerError && strings.Contains(e.body, "already in use"))
}

// A snapshot is one fetched profile and when it arrived.
type snapshot struct {
	p  *profile.Profile
	at time.Time
}

// fetch gets one profile and checks that it is a valid pprof profile. The
// wait bounds the whole request; it is the fetcher's timeout plus extra, the
// time a CPU profile spends sampling before it answers.
func (f *fetcher) fetch(ctx context.Context, kind, endpoint string, query url.Values, extra time.Duration) (snapshot, error) {
	u := f.endpointURL(endpoint, query)
	fail := func(status int, body string, unreachable bool, err error) (snapshot, error) {
		return snapshot{}, &fetchError{kind: kind, url: run.RedactURL(u.String()), status: status, body: body, unreachable: unreachable, err: err}
	}
	wait := f.timeout + extra
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fail(0, "", false, err)
	}
	for k, vs := range f.header {
		if http.CanonicalHeaderKey(k) == "Host" {
			req.Host = vs[0]
			continue
		}
		req.Header[k] = vs
	}
	resp, err := f.client.Do(req)
	if err != nil {
		// url.Error repeats the method and URL, which our message already names.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", wait)
		}
		if errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		return fail(0, "", true, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxProfileBytes+1))
	if err != nil {
		return fail(resp.StatusCode, "", true, fmt.Errorf("read answer: %w", err))
	}
	if len(data) > maxProfileBytes {
		return fail(resp.StatusCode, "", false, fmt.Errorf("answer is larger than %d MiB", maxProfileBytes>>20))
	}
	html := isHTML(resp.Header.Get("Content-Type"), data)
	if resp.StatusCode != http.StatusOK {
		line := ""
		if !html {
			line = firstLine(data)
		}
		msg := resp.Status
		// Go's default 404 body, "404 page not found", only repeats the status.
		if line != "" && !strings.Contains(strings.ToLower(line), strings.ToLower(http.StatusText(resp.StatusCode))) {
			msg += ": " + line
		}
		return fail(resp.StatusCode, line, false, errors.New(msg))
	}
	if html {
		return fail(resp.StatusCode, "", false, errors.New("got an HTML page, not a profile (is this URL a pprof endpoint?)"))
	}
	p, _, err := fetch.Parse(ctx, bytes.NewReader(data), fetch.Limits{})
	if errors.Is(err, fetch.ErrTooLarge) {
		return fail(resp.StatusCode, "", false, err)
	}
	if err != nil {
		return fail(resp.StatusCode, "", false, fmt.Errorf("answer is not a pprof profile (%s, %d bytes): %w", describeContentType(resp.Header.Get("Content-Type")), len(data), err))
	}
	if err := p.CheckValid(); err != nil {
		return fail(resp.StatusCode, "", false, fmt.Errorf("invalid profile: %w", err))
	}
	return snapshot{p: p, at: time.Now()}, nil
}

// fetchCPU takes a CPU profile of the given length.
func (f *fetcher) fetchCPU(ctx context.Context, seconds int) (snapshot, error) {
	return f.fetch(ctx, run.KindCPU, "profile", url.Values{"seconds": {strconv.Itoa(seconds)}}, time.Duration(seconds)*time.Second)
}

// isHTML recognises an HTML page, such as an application's catch-all route,
// by its declared type or, when the type is missing or wrong, by its start.
func isHTML(contentType string, data []byte) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	head := bytes.ToLower(bytes.TrimSpace(data[:min(len(data), 512)]))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html"))
}

func describeContentType(ct string) string {
	if ct == "" {
		return "no Content-Type"
	}
	return "Content-Type " + ct
}

// firstLine is the first line of a text answer, bounded and printable, for
// one-line error messages.
func firstLine(data []byte) string {
	data = bytes.TrimSpace(data[:min(len(data), 1024)])
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		data = data[:i]
	}
	s := strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == '\uFFFD' {
			return -1
		}
		return r
	}, string(data))
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "..."
	}
	return s
}
