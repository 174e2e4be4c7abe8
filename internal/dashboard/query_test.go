package dashboard

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/perfscope/perfscope/internal/profseries"
)

// TestQueriesSayWhatIsWrong: every query that cannot be read is refused
// as bad input, with a message naming the parameter; one that can is read
// as typed.
func TestQueriesSayWhatIsWrong(t *testing.T) {
	now := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	bad := []struct {
		name, query string
		read        func(url.Values) error
	}{
		{"limit", "limit=-1", func(v url.Values) error { _, err := ParseFilter(v); return err }},
		{"order", "order=random", func(v url.Values) error { _, err := ParseFilter(v); return err }},
		{"since", "since=yesterday", func(v url.Values) error { _, err := ParseFilter(v); return err }},
		{"name a metric", "package=p", func(v url.Values) error { _, err := ParseSeriesQuery(v); return err }},
		{"alpha", "name=B&unit=sec/op&alpha=2", func(v url.Values) error { _, err := ParseSeriesQuery(v); return err }},
		{"give two commits", "base=abcd", func(v url.Values) error { _, err := ParseCompareQuery(v); return err }},
		{"top", "top=0", func(v url.Values) error { _, err := ParseReportOptions(v); return err }},
		{"target", `target={job="api"`, func(v url.Values) error { _, err := ServiceProfiles(ServiceQuery(v), now); return err }},
		{"type", `target={job="api"}&type=cpuu`, func(v url.Values) error { _, err := ServiceProfiles(ServiceQuery(v), now); return err }},
		{"sort", `target={job="api"}&sort=size`, func(v url.Values) error { _, err := ServiceProfiles(ServiceQuery(v), now); return err }},
		{"query", `query={job=`, func(v url.Values) error { _, err := ProfileQuery(v); return err }},
	}
	for _, c := range bad {
		v, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		err = c.read(v)
		if !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: %v, want bad input", c.query, err)
			continue
		}
		if !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: %q does not name %q", c.query, err, c.name)
		}
	}

	v := url.Values{"target": {`{job="api"}`}, "from": {"2h"}, "to": {"1h"}, "base_from": {"3h"}, "base_to": {"2h"}}
	rp, err := ServiceProfiles(ServiceQuery(v), now)
	if err != nil {
		t.Fatal(err)
	}
	if rp.Head.Type != profseries.CPU || !rp.Head.From.Equal(now.Add(-2*time.Hour)) || !rp.Head.To.Equal(now.Add(-time.Hour)) ||
		rp.Base == nil || !rp.Base.From.Equal(now.Add(-3*time.Hour)) || rp.HeadKey == rp.BaseKey {
		t.Errorf("ranges read as %+v, base %+v", rp.Head, rp.Base)
	}
}
