package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/perfscope/perfscope/internal/store"
)

// tokenOf returns the token a request carries for reading: "Authorization:
// Bearer T", or T as the password of Basic authentication, which is what a
// browser prompt and a URL such as http://any:T@host/... (go tool pprof)
// send.
func tokenOf(r *http.Request) string {
	if t := bearerToken(r); t != "" {
		return t
	}
	if _, pw, ok := r.BasicAuth(); ok {
		return pw
	}
	return ""
}

// bearerToken returns the token of "Authorization: Bearer T", the only form
// a write may carry: a browser never adds it by itself, while it does send
// a Basic password it has cached to any page, cross-site forms included.
func bearerToken(r *http.Request) string {
	if scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(t)
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

// checkToken verifies the token t the request carries, answering 401 (or
// 500 when the store fails) and returning false when it is not valid; why
// says what needs the token when there is none.
func (s *Server) checkToken(w http.ResponseWriter, r *http.Request, t, why string) bool {
	if t == "" {
		s.unauthorized(w, r, why)
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

// writeAccess lets through only requests with a valid token in an
// "Authorization: Bearer" header that no browser page of another origin
// sent. A browser adds no such header to a cross-site form or fetch
// without asking the server first (which this one never allows), so the
// token alone stops cross-site writes; http.CrossOriginProtection refuses
// them earlier still, by the Sec-Fetch-Site and Origin headers browsers
// send, with a clearer reason than a missing token. Clients that are not
// browsers (perfscope push, curl) send neither header.
func (s *Server) writeAccess(h http.Handler) http.Handler {
	cross := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := cross.Check(r); err != nil {
			s.fail(w, r, http.StatusForbidden, fmt.Errorf("a web page of another origin (Origin %q, Sec-Fetch-Site %q) may not write here: upload with 'perfscope push' or a client that sends 'Authorization: Bearer TOKEN'",
				r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site")))
			return
		}
		why := "writing needs a token: send it as 'Authorization: Bearer TOKEN' (create one with 'perfscope token create')"
		if _, _, basic := r.BasicAuth(); basic {
			why = "writing needs the token as 'Authorization: Bearer TOKEN': a Basic-auth password is taken for reads only"
		}
		if s.checkToken(w, r, bearerToken(r), why) {
			h.ServeHTTP(w, r)
		}
	})
}

// readAccess lets loopback clients through, everyone with PublicRead, and
// others with a valid token, as a Bearer header or a Basic password.
func (s *Server) readAccess(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.PublicRead || fromLoopback(r) || s.checkToken(w, r, tokenOf(r), "reading from outside this machine needs a token (or a server started with --public-read): send it as 'Authorization: Bearer TOKEN' or as the password of Basic authentication") {
			h.ServeHTTP(w, r)
		}
	})
}

// isAPI reports whether the request is for the JSON API rather than a page.
func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }
