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
	if s == "now" {
		return now, nil
	}
	if t, ok := parseDate(s); ok {
		return t, nil
	}
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			if v, err := strconv.ParseFloat(n, 64); err == nil && v >= 0 {
				return now.Add(-time.Duration(v * float64(unit))), nil
			}
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a date (2025-03-01, 2025-03-01 14:00) nor a duration ago (90m, 72h, 30d, 2w)", s)
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

// Ago says s is an instant ParseInstant counts back from now ("now", a
// duration ago), not a date: what s names moves with now.
func Ago(s string) bool {
	if _, ok := parseDate(s); ok {
		return false
	}
	_, err := ParseInstant(s, time.Now())
	return err == nil
}
