package loadgen

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// A target is a parsed Config.URL: where to connect and what to ask for.
type target struct {
	url        string // as given, for messages
	tls        bool   // https
	host       string // host[:port] as written in the URL, for the Host header
	hostname   string // without port, for DNS and TLS server names
	port       string // explicit or the scheme's default
	requestURI string // path?query sent on the request line
}

// parseTarget accepts http:// and https:// URLs with a host; everything else
// gets an error that says which URLs are accepted.
func parseTarget(raw string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("invalid URL %q: %w", raw, err)
	}
	t := target{url: raw}
	switch u.Scheme {
	case "http":
		t.port = "80"
	case "https":
		t.tls, t.port = true, "443"
	default:
		return target{}, fmt.Errorf("invalid URL %q: want http://host[:port]/path or https://host[:port]/path", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return target{}, fmt.Errorf("invalid URL %q: no host", raw)
	}
	if u.User != nil {
		return target{}, fmt.Errorf("invalid URL %q: user information in URLs is not supported; send an Authorization header instead", raw)
	}
	t.host = u.Host
	t.hostname = u.Hostname()
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return target{}, fmt.Errorf("invalid URL %q: port %q out of range", raw, p)
		}
		t.port = p
	}
	t.requestURI = u.RequestURI()
	return t, nil
}

// addr is the dial address for the host name itself, before resolution.
func (t target) addr() string { return net.JoinHostPort(t.hostname, t.port) }

// buildRequest renders the one request a run sends, once: the hot loop then
// costs a single Write of these bytes per request.
func buildRequest(cfg *Config, t target) ([]byte, error) {
	if !isToken(cfg.Method) {
		return nil, fmt.Errorf("invalid method %q", cfg.Method)
	}
	var b bytes.Buffer
	b.WriteString(cfg.Method)
	b.WriteByte(' ')
	b.WriteString(t.requestURI)
	b.WriteString(" HTTP/1.1\r\n")

	host := t.host
	if h := cfg.Header.Get("Host"); h != "" {
		host = h
	}
	writeHeader(&b, "Host", host)
	if cfg.Header.Get("User-Agent") == "" {
		writeHeader(&b, "User-Agent", "perfscope")
	}
	keys := make([]string, 0, len(cfg.Header))
	for k := range cfg.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic bytes make runs comparable
	for _, k := range keys {
		if !isToken(k) {
			return nil, fmt.Errorf("invalid header name %q", k)
		}
		switch strings.ToLower(k) {
		case "host", "content-length", "transfer-encoding":
			// Host is written above; the body's length is ours to state.
			continue
		case "connection":
			if cfg.DisableKeepAlive {
				continue
			}
		}
		for _, v := range cfg.Header[k] {
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, fmt.Errorf("invalid value for header %s: contains a line break or NUL", k)
			}
			writeHeader(&b, k, v)
		}
	}
	if len(cfg.Body) > 0 || methodExpectsBody(cfg.Method) {
		writeHeader(&b, "Content-Length", strconv.Itoa(len(cfg.Body)))
	}
	if cfg.DisableKeepAlive {
		writeHeader(&b, "Connection", "close")
	}
	b.WriteString("\r\n")
	b.Write(cfg.Body)
	return b.Bytes(), nil
}

func writeHeader(b *bytes.Buffer, name, value string) {
	b.WriteString(name)
	b.WriteString(": ")
	b.WriteString(value)
	b.WriteString("\r\n")
}

// methodExpectsBody lists the methods some servers refuse (411 Length
// Required) without a Content-Length, even an empty one.
func methodExpectsBody(m string) bool { return m == "POST" || m == "PUT" || m == "PATCH" }

// isToken reports whether s is an RFC 9110 token, as methods and header
// names must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
