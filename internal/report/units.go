package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// value formats a profile value in its unit, to three significant digits:
// durations for nanoseconds, binary sizes for bytes, k/M/G for counts.
func value(v int64, unit string) string {
	switch unit {
	case "nanoseconds":
		return seconds(float64(v) / 1e9)
	case "bytes":
		return size(float64(v))
	default:
		return count(float64(v))
	}
}

// seconds formats a duration given in seconds.
func seconds(s float64) string {
	neg := ""
	if s < 0 {
		neg, s = "-", -s
	}
	switch {
	case s == 0:
		return "0s"
	case s < 1e-6:
		return neg + sig(s*1e9) + "ns"
	case s < 1e-3:
		return neg + sig(s*1e6) + "µs"
	case s < 1:
		return neg + sig(s*1e3) + "ms"
	case s < 600:
		return neg + sig(s) + "s"
	default:
		return neg + strconv.FormatFloat(s/60, 'f', 1, 64) + "m"
	}
}

// rate formats requests per second: whole numbers with separators from a
// thousand up, three significant digits below.
func rate(r float64) string {
	if r >= 1000 {
		return thousands(int64(math.Round(r))) + " req/s"
	}
	return sig(r) + " req/s"
}

// millis formats a latency given in milliseconds.
func millis(ms float64) string { return seconds(ms / 1e3) }

func size(b float64) string {
	neg := ""
	if b < 0 {
		neg, b = "-", -b
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return neg + strconv.FormatFloat(b, 'f', -1, 64) + " B"
	}
	return neg + sig(b) + " " + units[i]
}

// count formats a count: exact below ten thousand, then k, M, G.
func count(n float64) string {
	neg := ""
	if n < 0 {
		neg, n = "-", -n
	}
	switch {
	case n < 1e4:
		if n == math.Trunc(n) {
			return neg + strconv.FormatFloat(n, 'f', 0, 64)
		}
		return neg + sig(n)
	case n < 1e6:
		return neg + sig(n/1e3) + "k"
	case n < 1e9:
		return neg + sig(n/1e6) + "M"
	default:
		return neg + sig(n/1e9) + "G"
	}
}

// thousands formats an integer with thousands separators: 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var sb strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			sb.WriteByte(',')
		}
		sb.WriteRune(c)
	}
	if neg {
		return "-" + sb.String()
	}
	return sb.String()
}

// percent formats a fraction (0.123) as a percentage ("12.3%").
func percent(f float64) string {
	p := f * 100
	switch a := math.Abs(p); {
	case a == 0:
	case a < 0.01:
		return "<0.01%"
	case a < 0.1:
		return fmt.Sprintf("%.2f%%", p)
	}
	return fmt.Sprintf("%.1f%%", p)
}

// sig formats x (at least 0) to three significant digits, dropping
// trailing zeros.
func sig(x float64) string {
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

// shortPath keeps the last two elements of a source path: enough to find
// the file in an editor, short enough for a terminal. JSON keeps the
// whole path.
func shortPath(file string) string {
	file = strings.ReplaceAll(file, "\\", "/")
	i := strings.LastIndexByte(file, '/')
	if i <= 0 {
		return file
	}
	if j := strings.LastIndexByte(file[:i], '/'); j >= 0 {
		return file[j+1:]
	}
	return file
}

// location formats file:line with a short path; "" without a file.
func location(file string, line int64) string {
	if file == "" {
		return ""
	}
	if line == 0 {
		return shortPath(file)
	}
	return shortPath(file) + ":" + strconv.FormatInt(line, 10)
}
