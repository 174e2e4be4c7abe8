// Package units formats the quantities perfscope prints — durations, sizes,
// counts, rates and shares — one way everywhere: in the terminal, in
// markdown, in findings' sentences and on the dashboard. Numbers are for
// people: three significant digits, binary prefixes for bytes, thousands
// separators for large whole numbers, never e-notation.
package units

import (
	"math"
	"strconv"
	"strings"
)

// Value formats a profile value in the unit its sample type names:
// durations for "nanoseconds", sizes for "bytes", counts otherwise.
func Value(v int64, unit string) string {
	switch unit {
	case "nanoseconds":
		return Seconds(float64(v) / 1e9)
	case "bytes":
		return Bytes(float64(v))
	default:
		return Count(float64(v))
	}
}

// Seconds formats a duration given in seconds: "0s", "850ns", "12.3µs",
// "4.5ms", "2.1s", "12.5m". A value that rounds up to the next prefix is
// written with it: 999.9ns is "1µs", never "1000ns".
func Seconds(s float64) string {
	neg := ""
	if s < 0 {
		neg, s = "-", -s
	}
	if s == 0 {
		return "0s"
	}
	if s < 1 {
		for _, p := range [...]struct {
			factor float64
			name   string
		}{{1e9, "ns"}, {1e6, "µs"}, {1e3, "ms"}} {
			if s*p.factor < 1000 && !roundsTo(s*p.factor, 1000) {
				return neg + Sig(s*p.factor) + p.name
			}
		}
	}
	if s < 600 && !roundsTo(s, 600) {
		return neg + Sig(s) + "s"
	}
	return neg + strconv.FormatFloat(s/60, 'f', 1, 64) + "m"
}

// roundsTo reports whether x, written to three significant digits by Sig,
// reads limit or more: the point where the next prefix takes over.
func roundsTo(x, limit float64) bool {
	r, err := strconv.ParseFloat(Sig(x), 64)
	return err == nil && r >= limit
}

// Millis formats a duration given in milliseconds, as Seconds does.
func Millis(ms float64) string { return Seconds(ms / 1e3) }

// Rate formats requests per second: whole numbers with thousands
// separators from a thousand up, three significant digits below.
func Rate(r float64) string {
	if r >= 1000 {
		return Thousands(int64(math.Round(r))) + " req/s"
	}
	return Sig(r) + " req/s"
}

// Bytes formats a size in bytes with binary prefixes: "512 B", "1.5 KiB",
// "3.46 MiB".
func Bytes(b float64) string {
	neg := ""
	if b < 0 {
		neg, b = "-", -b
	}
	names := [...]string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for (b >= 1024 || roundsTo(b, 1024)) && i < len(names)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return neg + Sig(b) + " B"
	}
	return neg + Sig(b) + " " + names[i]
}

// Count formats a count: exact below ten thousand, then with k, M and G.
func Count(n float64) string {
	neg := ""
	if n < 0 {
		neg, n = "-", -n
	}
	switch {
	case n < 1e4 && !roundsTo(n, 1e4):
		if n == math.Trunc(n) {
			return neg + strconv.FormatFloat(n, 'f', 0, 64)
		}
		return neg + Sig(n)
	case n < 1e6 && !roundsTo(n/1e3, 1e3):
		return neg + Sig(n/1e3) + "k"
	case n < 1e9 && !roundsTo(n/1e6, 1e3):
		return neg + Sig(n/1e6) + "M"
	default:
		return neg + Sig(n/1e9) + "G"
	}
}

// Thousands formats an integer with thousands separators: "1,234,567".
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	digits := strings.TrimPrefix(s, "-")
	var sb strings.Builder
	if len(digits) < len(s) {
		sb.WriteByte('-')
	}
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte(digits[i])
	}
	return sb.String()
}

// Number formats any measured value for reading: whole numbers with
// thousands separators, others to three significant digits (more below
// one, where three digits are needed to tell values apart), never in
// e-notation.
func Number(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return strconv.FormatFloat(x, 'f', -1, 64)
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return Thousands(int64(x))
	case math.Abs(x) >= 1000:
		return Thousands(int64(math.Round(x)))
	case math.Abs(x) >= 1:
		if x < 0 {
			return "-" + Sig(-x)
		}
		return Sig(x)
	}
	// Below one: three significant digits after the leading zeros.
	s := strconv.FormatFloat(x, 'f', -1, 64)
	digits := 3 - int(math.Floor(math.Log10(math.Abs(x)))) - 1
	s = strconv.FormatFloat(x, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Percent formats a fraction (0.123) as a percentage ("12.3%"); small
// shares keep two decimals, tiny ones read "<0.01%".
func Percent(f float64) string {
	p := f * 100
	switch a := math.Abs(p); {
	case a == 0:
	case a < 0.01:
		return "<0.01%"
	case a < 0.1:
		return strconv.FormatFloat(p, 'f', 2, 64) + "%"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

// Sig formats x (at least 0) to three significant digits, dropping
// trailing zeros: 123, 12.3, 1.23.
func Sig(x float64) string {
	var s string
	switch {
	case x >= 100:
		s = strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 10:
		s = strconv.FormatFloat(x, 'f', 1, 64)
	default:
		s = strconv.FormatFloat(x, 'f', 2, 64)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Points formats a difference of two fractions (0.015) as signed
// percentage points ("+1.5 pts").
func Points(d float64) string {
	s := strconv.FormatFloat(d*100, 'f', 1, 64)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + " pts"
}
