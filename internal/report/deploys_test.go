package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestWriteDeploysPerRequest renders a deploy judged by CPU per request
// and one judged by shares: each says what it was compared by, the first
// with its requests and its CPU per request before and after.
func TestWriteDeploysPerRequest(t *testing.T) {
	at := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	service := profseries.NewLabels(map[string]string{"job": "leftpad"})
	rep := &profseries.DeployReport{Selector: "{}", From: at.Add(-time.Hour), To: at.Add(time.Hour), Type: profseries.CPU,
		Alpha: 0.05, MinChange: 0.01, MinPerRequestChange: 0.05, MinScrapes: 5, Span: 30 * time.Minute,
		Deploys: []profseries.Deploy{
			{Service: service, At: at, Before: profseries.Release{Version: "1"}, After: profseries.Release{Version: "2"},
				BeforeScrapes: 9, AfterScrapes: 9, Judged: true, Compared: profseries.ComparedPerRequest, Basis: "CPU seconds per request",
				PerRequest: &profseries.DeployPerRequest{BeforeRequests: 49426, AfterRequests: 88335,
					Total:  profseries.PerRequestChange{Before: 93.8e-6, After: 45.7e-6, Change: -0.513, P: 0.004, Significant: true, BeforeScrapes: 9, AfterScrapes: 9},
					Routes: []profseries.PerRequestChange{{Route: "GET /v1/leftpad/", Before: 80e-6, After: 81e-6, Change: 0.0125, P: 0.6, BeforeScrapes: 9, AfterScrapes: 9}}, Significant: 1},
				Changes: []profseries.DeployChange{}},
			{Service: service, At: at.Add(-30 * time.Minute), Before: profseries.Release{Version: "0"}, After: profseries.Release{Version: "1"},
				BeforeScrapes: 9, AfterScrapes: 9, Judged: true, Compared: profseries.ComparedShares,
				Basis:         "each function's cum share (itself and what it calls) of cpu per scrape (CPU per request is not known: the scrapes record no request counts (serve the application behind expose.Middleware))",
				NotPerRequest: "the scrapes record no request counts (serve the application behind expose.Middleware)"},
		}}
	var buf bytes.Buffer
	if err := WriteDeploys(&buf, Text, rep); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	t.Log(out)
	for _, want := range []string{
		"CPU per request", "49,426 before, 88,335 after", "all requests", "93.8µs", "45.7µs", "-51.3%", "significant",
		"GET /v1/leftpad/", "+1.2%", NoShareChange,
		"shares of the profile (CPU per request is not known: the scrapes record no request counts (serve the application behind expose.Middleware))",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("deploys text lacks %q:\n%s", want, out)
		}
	}
}
