package loadgen

import (
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
)

// CheckURL accepts http:// and https:// URLs with a host, and says what to
// type otherwise.
func CheckURL(raw string) error {
	if !strings.Contains(raw, "://") {
		return fmt.Errorf("URL %q has no scheme: did you mean http://%s ?", raw, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL %q: only http:// and https:// are supported", raw)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("URL %q has no host: want http://host[:port]/path", raw)
	}
	return nil
}

// ParseHeaders parses request headers written "Name: value", as curl's
// and ab's -H take them.
func ParseHeaders(lines []string) (http.Header, error) {
	header := http.Header{}
	for _, h := range lines {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf(`header %q: want "Name: value"`, h)
		}
		header.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	return header, nil
}

// CheckMethod returns method in upper case, or an error when it cannot be
// an HTTP method.
func CheckMethod(method string) (string, error) {
	m := strings.ToUpper(method)
	if m == "" || strings.ContainsAny(m, " \t\r\n:/") {
		return "", fmt.Errorf("%q is not an HTTP method", method)
	}
	return m, nil
}
