package server

import (
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/perfscope/perfscope/internal/store"
)

// tokenOf returns the token a request carries: "Authorization: Bearer T",
// or T as the password of Basic authentication, which is what a browser
// prompt and a URL such as http://any:T@host/... (go tool pprof) send.
func tokenOf(r *http.Request) string {
	if auth := r.Header.Get("Authorization"); auth != "" {
		if scheme, t, ok := strings.Cut(auth, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(t)
		}
	}
	if _, pw, ok := r.BasicAuth(); ok {
		return pw
	}
	return ""
}

// fromLoopback reports whether the client is on this machine. A request
// that came through a proxy is not, even when the proxy itself connects
// from loopback: the proxy's clients could be anyone.
func fromLoopback(r *http.Request) bool {
	if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Forwarded") != "" || r.Header.Get("X-Real-Ip") != "" {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkToken verifies the request's token, answering 401 (or 500 when the
// store fails) and returning false when it is not valid.
func (s *Server) checkToken(w http.ResponseWriter, r *http.Request, why string) bool {
	t := tokenOf(r)
	if t == "" {
		s.unauthorized(w, r, why+": send a token as 'Authorization: Bearer TOKEN' (create one with 'perfscope token create')")
		return false
	}
	if _, err := s.cfg.Store.VerifyToken(r.Context(), t); err != nil {
		if errors.Is(err, store.ErrUnknownToken) {
			s.unauthorized(w, r, "the token is not valid: create one with 'perfscope token create' on the server's database")
			return false
		}
		s.fail(w, r, http.StatusInternalServerError, err)
		return false
	}
	return true
}

// unauthorized answers 401. Pages ask for Basic authentication, so a
// browser prompts for the token (as the password).
func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request, msg string) {
	if isAPI(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="perfscope"`)
	} else {
		w.Header().Set("WWW-Authenticate", `Basic realm="perfscope (any user name, the token as password)"`)
	}
	s.fail(w, r, http.StatusUnauthorized, errors.New(msg))
}

// writeAccess lets only requests with a valid token through.
func (s *Server) writeAccess(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.checkToken(w, r, "writing needs a token") {
			h.ServeHTTP(w, r)
		}
	})
}

// readAccess lets loopback clients through, everyone with PublicRead, and
// others with a valid token.
func (s *Server) readAccess(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.PublicRead || fromLoopback(r) || s.checkToken(w, r, "reading from outside this machine needs a token (or a server started with --public-read)") {
			h.ServeHTTP(w, r)
		}
	})
}

// isAPI reports whether the request is for the JSON API rather than a page.
func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }
