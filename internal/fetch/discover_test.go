package fetch

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDiscover looks for the pprof endpoint of real servers on loopback:
// one serving pprof on its own origin, one serving it apart (found
// through the fallback), one asking for credentials.
func TestDiscover(t *testing.T) {
	withPprof := serve(t, pprofMux())
	app := serve(t, http.NotFoundHandler())
	apart := serve(t, pprofMux()).URL + "/debug/pprof/"
	auth := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	parse := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}

	for _, tc := range []struct {
		name       string
		target     string
		opts       DiscoverOptions
		wantBase   string
		wantSource string
		wantErr    []string // parts of the error, when one is wanted
	}{
		{name: "own origin", target: withPprof.URL + "/work", opts: DiscoverOptions{Fallback: apart},
			wantBase: withPprof.URL + "/debug/pprof/", wantSource: SourceTarget},
		{name: "given", target: app.URL, opts: DiscoverOptions{Given: strings.TrimSuffix(apart, "/")},
			wantBase: apart, wantSource: SourceGiven},
		{name: "fallback", target: app.URL + "/work", opts: DiscoverOptions{Fallback: apart},
			wantBase: apart, wantSource: SourceFallback},
		{name: "given, not serving", target: withPprof.URL, opts: DiscoverOptions{Given: app.URL + "/nope?token=s3cret"},
			wantBase: app.URL + "/nope/?token=REDACTED", wantErr: []string{"pprof endpoint " + app.URL + "/nope/?token=REDACTED is not usable: 404 Not Found"}},
		{name: "given, malformed", target: app.URL, opts: DiscoverOptions{Given: "ftp://h/?token=s3cret"},
			wantBase: "ftp://h/?token=REDACTED", wantErr: []string{"want an http:// or https:// URL"}},
		{name: "no fallback", target: app.URL, wantBase: app.URL + "/debug/pprof/",
			wantErr: []string{"no pprof endpoint at " + app.URL + "/debug/pprof/ (404 Not Found)"}},
		{name: "fallback not serving either", target: app.URL, opts: DiscoverOptions{Fallback: "http://127.0.0.1:1/debug/pprof/"},
			wantBase: app.URL + "/debug/pprof/",
			wantErr:  []string{"no pprof endpoint at " + app.URL + "/debug/pprof/ (404 Not Found) nor at http://127.0.0.1:1/debug/pprof/ (", "refused"}},
		{name: "credentials refused", target: auth.URL, opts: DiscoverOptions{Fallback: apart},
			wantBase: auth.URL + "/debug/pprof/", wantErr: []string{"pprof endpoint " + auth.URL + "/debug/pprof/ is not usable: 401 Unauthorized"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Discover(t.Context(), parse(tc.target), tc.opts)
			if d == nil || d.Base != tc.wantBase {
				t.Fatalf("discovery %+v; want base %s", d, tc.wantBase)
			}
			if tc.wantErr != nil {
				if err == nil || d.Endpoint != nil {
					t.Fatalf("found %+v; want an error", d)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "s3cret") {
						t.Errorf("error %q: want one line saying %q, with no secret", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Endpoint.Close()
			if d.Source != tc.wantSource || d.Endpoint.Base() != tc.wantBase {
				t.Errorf("found %s (%s); want %s (%s)", d.Endpoint.Base(), d.Source, tc.wantBase, tc.wantSource)
			}
			if tc.wantSource == SourceFallback && (d.Passed != tc.target[:strings.LastIndex(tc.target, "/")]+"/debug/pprof/" || !strings.Contains(Reason(d.PassedErr), "404")) {
				t.Errorf("passed over %q (%v); want the target's origin, for its 404", d.Passed, d.PassedErr)
			}
		})
	}

	t.Run("kinds of failure", func(t *testing.T) {
		_, err := Discover(t.Context(), parse(app.URL), DiscoverOptions{})
		if !errors.Is(err, ErrNoEndpoint) {
			t.Errorf("nothing found: %v; want ErrNoEndpoint", err)
		}
		_, err = Discover(t.Context(), parse(auth.URL), DiscoverOptions{})
		var fe *Error
		if !errors.As(err, &fe) || !fe.Unauthorized() || errors.Is(err, ErrNoEndpoint) {
			t.Errorf("credentials refused: %v; want the 401 *Error", err)
		}
	})

	// A Host header selects the site on the target's own origin; another
	// origin is asked under its own name.
	t.Run("host header", func(t *testing.T) {
		hosts := make(chan string, 2)
		record := func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hosts <- r.Host
				h.ServeHTTP(w, r)
			})
		}
		target := serve(t, record(http.NotFoundHandler()))
		fallback := serve(t, record(pprofMux()))
		d, err := Discover(t.Context(), parse(target.URL), DiscoverOptions{
			Fallback: fallback.URL + "/debug/pprof/",
			Endpoint: EndpointOptions{Header: http.Header{"Host": {"site.example"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		d.Endpoint.Close()
		if own, alt := <-hosts, <-hosts; own != "site.example" || alt != parse(fallback.URL).Host {
			t.Errorf("hosts asked: %q on the target, %q on the fallback; want site.example and the fallback's own", own, alt)
		}
	})
}
