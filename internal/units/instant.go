package units

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseInstant reads a point in time as a user writes one on a command
// line or in a URL: "now", a date (2025-03-01), a date and time
// (2025-03-01 14:00, 2025-03-01T14:00, RFC 3339), or a duration before now
// (90m, 72h, and d for days, w for weeks: 30d, 2w). Dates without a zone
// are local time.
func ParseInstant(s string, now time.Time) (time.Time, error) {
	t, _, err := ParseInstantAgo(s, now)
	return t, err
}

// ParseInstantAgo is ParseInstant, and says whether s is counted back
// from now ("now", a duration ago) rather than a date: what it names
// moves with now.
func ParseInstantAgo(s string, now time.Time) (t time.Time, ago bool, err error) {
	if s == "now" {
		return now, true, nil
	}
	if t, ok := parseDate(s); ok {
		return t, false, nil
	}
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			if v, err := strconv.ParseFloat(n, 64); err == nil && v >= 0 {
				return now.Add(-time.Duration(v * float64(unit))), true, nil
			}
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), true, nil
	}
	return time.Time{}, false, fmt.Errorf("%q is neither a date (2025-03-01, 2025-03-01 14:00) nor a duration ago (90m, 72h, 30d, 2w)", s)
}

// parseDate reads s as one of the dates ParseInstant takes.
func parseDate(s string) (time.Time, bool) {
	for _, layout := range []string{time.DateOnly, time.RFC3339, time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
