package units

import (
	"testing"
	"time"
)

func TestParseInstant(t *testing.T) {
	now := time.Date(2025, 3, 20, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"72h":                  now.Add(-72 * time.Hour),
		"30d":                  now.Add(-30 * 24 * time.Hour),
		"2w":                   now.Add(-14 * 24 * time.Hour),
		"2025-03-01T10:00:00Z": time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC),
	} {
		got, err := ParseInstant(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseInstant(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if got, err := ParseInstant("2025-03-01", now); err != nil || got.Day() != 1 {
		t.Errorf("date: %v, %v", got, err)
	}
	if got, err := ParseInstant("now", now); err != nil || !got.Equal(now) {
		t.Errorf("now: %v, %v", got, err)
	}
	for _, bad := range []string{"", "yesterday", "-5m", "2025-13-01"} {
		if _, err := ParseInstant(bad, now); err == nil {
			t.Errorf("ParseInstant(%q) accepted", bad)
		}
	}
}

func TestParseInstantAgo(t *testing.T) {
	now := time.Date(2025, 3, 20, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]bool{
		"now": true, "90m": true, "24h": true, "7d": true, "2w": true,
		"2025-03-01": false, "2025-03-01T10:00:00Z": false, "2025-03-01 14:00": false,
	} {
		at, ago, err := ParseInstantAgo(in, now)
		if want2, err2 := ParseInstant(in, now); err != nil || err2 != nil || ago != want || !at.Equal(want2) {
			t.Errorf("ParseInstantAgo(%q) = %v, %v, %v; want %v, %v as ParseInstant reads it", in, at, ago, err, want2, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-5m"} {
		if _, ago, err := ParseInstantAgo(bad, now); err == nil || ago {
			t.Errorf("ParseInstantAgo(%q) accepted (ago %v)", bad, ago)
		}
	}
}
