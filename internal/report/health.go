package report

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/perfscope/perfscope/internal/loadgen"
	"github.com/perfscope/perfscope/internal/profiles"
	"github.com/perfscope/perfscope/internal/units"
)

// LoadFailure is the sentence that leads the output of a failed load, such
// as "the load failed: 100% of requests returned 404 Not Found"; "" when
// the load did not fail.
func LoadFailure(l *loadgen.Result) string {
	if l == nil || l.Health == nil || !l.Health.Failed {
		return ""
	}
	h := l.Health
	if l.Requests == 0 {
		return "the load failed: no request completed"
	}
	what, gone := errorKindText(h.MainError)
	s := fmt.Sprintf("the load failed: %s of requests %s", units.Percent(h.MainShare), what)
	if h.ErrorShare > h.MainShare {
		s = fmt.Sprintf("the load failed: %s of requests failed, %s of them %s", units.Percent(h.ErrorShare), units.Percent(h.MainShare), what)
	}
	if gone {
		s += " (the target stopped answering)"
	}
	if h.MaxErrors == 0 {
		return s + "; any failed request fails a run (--max-errors 0)"
	}
	return s + fmt.Sprintf("; more than %s failed requests fail a run (--max-errors)", units.Percent(h.MaxErrors))
}

// errorKindText says what happened to requests of one error kind; gone
// reports a kind that means no answer came.
func errorKindText(kind string) (what string, gone bool) {
	if code, ok := strings.CutPrefix(kind, "status_"); ok {
		n, _ := strconv.Atoi(code)
		if t := http.StatusText(n); t != "" {
			return "returned " + code + " " + t, false
		}
		return "returned status " + code, false
	}
	switch kind {
	case "connect_refused":
		return "were refused a connection", true
	case "timeout":
		return "got no answer in time", true
	case "reset":
		return "had their connection reset", true
	case "closed":
		return "had their connection closed by the target", true
	case "malformed":
		return "got an answer that is not HTTP", false
	}
	return "failed", false
}

// findingsAbsence says why a run shows no findings when "none" would
// mislead: its load failed, or no profile was analysed. "" when an
// analysis ran on a healthy load.
func findingsAbsence(a *profiles.Analysis) string {
	switch {
	case LoadFailure(a.Run.Load) != "":
		return "not diagnosed as a healthy service: the load failed, so the profiles show it failing"
	case a.CPU == nil && a.Allocs == nil && a.Block == nil && a.Mutex == nil && a.Goroutines == nil:
		return "not diagnosed: the run has no profiles to analyse"
	}
	return ""
}
