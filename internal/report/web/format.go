package web

import (
	"fmt"
	"net/url"

	"github.com/perfscope/perfscope/internal/units"
)

// Thousands writes a count of any integer type with thousands separators.
func Thousands(n any) string {
	switch n := n.(type) {
	case int:
		return units.Thousands(int64(n))
	case int64:
		return units.Thousands(n)
	}
	return fmt.Sprint(n)
}

// BetterClass names the colour of a direction: "better", "worse" or "".
func BetterClass(better int) string {
	switch {
	case better > 0:
		return "better"
	case better < 0:
		return "worse"
	}
	return ""
}

// CompareLink is the comparison page of two commits, keeping the filter's
// branch and machine.
func CompareLink(base, head string, keep url.Values) string {
	q := url.Values{"base": {base}, "head": {head}}
	for _, k := range []string{"branch", "machine"} {
		if v := keep.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	return "/compare?" + q.Encode()
}

func deref(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}
