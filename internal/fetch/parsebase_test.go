package fetch

import "testing"

// TestParseBaseAccepts checks the pprof base URLs ParseBase accepts: an origin alone
// means its /debug/pprof/, as go tool pprof reads it, and any other path is
// kept as the directory of the profiles.
func TestParseBaseAccepts(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:6060":               "http://127.0.0.1:6060/debug/pprof/",
		"http://127.0.0.1:6060/":              "http://127.0.0.1:6060/debug/pprof/",
		"http://127.0.0.1:6060/debug/pprof":   "http://127.0.0.1:6060/debug/pprof/",
		"http://127.0.0.1:6060/debug/pprof/":  "http://127.0.0.1:6060/debug/pprof/",
		"https://svc.internal/admin/pprof":    "https://svc.internal/admin/pprof/",
		"http://127.0.0.1:6060/?token=secret": "http://127.0.0.1:6060/debug/pprof/?token=secret",
	} {
		u, err := ParseBase(in)
		if err != nil || u.String() != want {
			t.Errorf("ParseBase(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
}
