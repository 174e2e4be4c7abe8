package profseries

import (
	"fmt"
	"time"

	"github.com/perfscope/perfscope/internal/units"
)

// ParseRange reads a time range as the CLI's flags and the API's
// parameters give it: from (an instant, units.ParseInstant) when given,
// else since (an instant or a duration ago; default 1h); to when given,
// else now. Each error names the parameter at fault.
func ParseRange(since, from, to string, now time.Time) (time.Time, time.Time, error) {
	var err error
	start, end := now, now
	switch {
	case from != "":
		if start, err = units.ParseInstant(from, now); err != nil {
			return start, end, fmt.Errorf("from: %w", err)
		}
	default:
		if since == "" {
			since = "1h"
		}
		if start, err = units.ParseInstant(since, now); err != nil {
			return start, end, fmt.Errorf("since: %w", err)
		}
	}
	if to != "" {
		if end, err = units.ParseInstant(to, now); err != nil {
			return start, end, fmt.Errorf("to: %w", err)
		}
	}
	if !end.After(start) {
		return start, end, fmt.Errorf("empty time range: from %s is not before to %s", start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	return start, end, nil
}
