package fetch

import (
	"net/url"
	"strings"
)

// Redacted replaces a secret that perfscope does not show or record.
const Redacted = "REDACTED"

// RedactURL returns the URL s as perfscope shows and records it: the
// value of each query parameter replaced with REDACTED, its name kept
// (?str=REDACTED&len=REDACTED), a fragment replaced too, and a password
// shown as url.URL.Redacted does (user:xxxxx@). The rest is kept as
// given. A target's query string often carries an API key or a signed
// token, and run directories get copied, committed and uploaded: the
// credentials used to make a run must not travel with it, while the
// parameters' names still say what was asked. Every URL a run records
// (its target, pprof_url, each profile's url, the load's url, URLs in its
// command line and in the errors and notes it keeps) goes through
// RedactURL, and so does every URL this package puts in an error or
// returns (Endpoint.URL, Endpoint.Base); the requests themselves use the
// URL as given.
func RedactURL(s string) string {
	rest, fragment, hasFragment := strings.Cut(s, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	if u, err := url.Parse(base); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			base = u.Redacted()
		}
	}
	var b strings.Builder
	b.WriteString(base)
	if hasQuery {
		b.WriteByte('?')
		for i, param := range strings.Split(query, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			// An empty value hides nothing, and says the parameter was
			// given empty.
			if name, value, ok := strings.Cut(param, "="); ok && value != "" {
				param = name + "=" + Redacted
			}
			b.WriteString(param)
		}
	}
	if hasFragment {
		b.WriteByte('#')
		if fragment != "" {
			b.WriteString(Redacted)
		}
	}
	return b.String()
}
