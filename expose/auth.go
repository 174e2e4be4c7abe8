package expose

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// authenticator decides whether a request may read profiles.
type authenticator struct {
	hasToken bool
	// tokenSum is the SHA-256 of the configured token. Comparing digests of
	// fixed length, rather than the tokens themselves, keeps the comparison's
	// duration independent of the presented token's length as well as its
	// content: subtle.ConstantTimeCompare returns early on a length mismatch.
	tokenSum [sha256.Size]byte
	// mutualTLS is set when the TLS configuration verifies client
	// certificates, so the handshake has authenticated the client already.
	mutualTLS bool
	// compare is subtle.ConstantTimeCompare; tests replace it to check that
	// every request reaches the same comparison.
	compare func(x, y []byte) int
}

// newAuthenticator builds the authenticator for opts and refuses
// configurations that would serve profiles unauthenticated where that is not
// allowed.
func newAuthenticator(opts Options) (*authenticator, error) {
	a := &authenticator{compare: subtle.ConstantTimeCompare}
	if opts.Token != "" {
		a.hasToken = true
		a.tokenSum = sha256.Sum256([]byte(opts.Token))
	}
	if c := opts.TLSConfig; c != nil && c.ClientAuth == tls.RequireAndVerifyClientCert && c.ClientCAs != nil {
		a.mutualTLS = true
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("expose: address %q: %w", opts.Addr, err)
	}
	if needsAuth(host, opts.RequireAuth) && !a.enabled() {
		return nil, authRequiredError(opts.Addr, opts.RequireAuth)
	}
	return a, nil
}

// authRequiredError explains why Start refused to serve without
// authentication and what to set.
func authRequiredError(addr string, requireAuth bool) error {
	why := addr + " is not a loopback address"
	if requireAuth {
		why = "RequireAuth is set"
	}
	return fmt.Errorf("%w: %s; set Options.Token, or Options.TLSConfig with ClientAuth tls.RequireAndVerifyClientCert and ClientCAs", ErrAuthRequired, why)
}

// needsAuth reports whether listening on host requires authentication: any
// host that is not a loopback address does, including the unspecified
// addresses ("", 0.0.0.0, ::) that listen on every interface and names other
// than "localhost", which could resolve anywhere.
func needsAuth(host string, requireAuth bool) bool {
	if requireAuth {
		return true
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// enabled reports whether any authentication is configured.
func (a *authenticator) enabled() bool { return a.hasToken || a.mutualTLS }

// wrap returns h behind the token check, or h itself when no token is set
// (on loopback, or when mutual TLS authenticated the connection).
func (a *authenticator) wrap(h http.Handler) http.Handler {
	if !a.hasToken {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pprof"`)
			http.Error(w, "unauthorized: send the token as 'Authorization: Bearer <token>' (a token in the query string is not accepted)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// authorized reports whether r carries the token in its Authorization
// header. Every request, with a missing, short, long or wrong token, goes
// through the same digest comparison, so how long it takes says nothing
// about how close the guess was.
func (a *authenticator) authorized(r *http.Request) bool {
	token, ok := bearerToken(r.Header.Get("Authorization"))
	sum := sha256.Sum256([]byte(token))
	match := a.compare(sum[:], a.tokenSum[:]) == 1
	return match && ok
}

// bearerToken extracts the token of an "Authorization: Bearer <token>"
// header value; the scheme name is case-insensitive (RFC 9110 section 11.1).
func bearerToken(header string) (string, bool) {
	const prefix = "bearer "
	if len(header) < len(prefix) || !strings.EqualFold(header[:len(prefix)], prefix) {
		return "", false
	}
	return strings.TrimLeft(header[len(prefix):], " "), true
}
