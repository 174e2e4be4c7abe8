package loadgen

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"strings"
)

// CheckURL accepts http:// and https:// URLs with a host, and says what to
// change in anything else, with an example of a URL it accepts.
func CheckURL(raw string) error {
	if !strings.Contains(raw, "://") {
		if hostPath.MatchString(raw) {
			return fmt.Errorf("URL %q has no scheme: did you mean 'http://%s'?", raw, raw)
		}
		return fmt.Errorf("URL %q does not start with http:// or https://: write it like '%s'", raw, exampleURL)
	}
	u, err := url.Parse(raw)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		err = ue.Err // url.Error repeats the URL
	}
	if err != nil {
		return fmt.Errorf("URL %q cannot be read (%v): write it like '%s'", raw, err, exampleURL)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL %q: only http:// and https:// are supported, not %s://: write it like '%s'", raw, u.Scheme, exampleURL)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("URL %q has no host: write it like '%s'", raw, exampleURL)
	}
	return nil
}

// exampleURL is the form of URL CheckURL's complaints show.
const exampleURL = "http://127.0.0.1:8080/path"

// hostPath matches what a URL without its scheme looks like: a host, a
// port maybe, a path maybe (localhost:8080/api, example.com).
var hostPath = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]*(:[0-9]+)?(/\S*)?$`)

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
